-- The PostgreSQL case studies' store: a small multi-tenant CRM, made the
-- same on every run (no clock, no random). Tenants are kept apart by
-- row-level security for the tenant roles; the observer, as the cluster's
-- owner, sees every row.
CREATE TABLE tenants (
    id text PRIMARY KEY,
    name text NOT NULL
);
CREATE TABLE contacts (
    id serial PRIMARY KEY,
    tenant_id text NOT NULL REFERENCES tenants (id),
    name text NOT NULL,
    email text,
    phone text
);
CREATE TABLE deals (
    id serial PRIMARY KEY,
    contact_id integer NOT NULL REFERENCES contacts (id),
    title text NOT NULL,
    amount numeric(12, 2) NOT NULL,
    stage text NOT NULL DEFAULT 'open'
);
CREATE TABLE audit_log (
    id bigserial PRIMARY KEY,
    actor text NOT NULL,
    action text NOT NULL
);

INSERT INTO tenants VALUES ('acme', 'Acme Corp'), ('globex', 'Globex'), ('initech', 'Initech');
INSERT INTO contacts (tenant_id, name, email, phone)
SELECT (ARRAY['acme', 'globex', 'initech'])[1 + i % 3],
       'Contact ' || i,
       CASE WHEN i % 4 = 0 THEN NULL ELSE 'contact' || i || '@example.org' END,
       '+1-555-' || lpad(i::text, 4, '0')
  FROM generate_series(1, 120) AS i;
INSERT INTO deals (contact_id, title, amount, stage)
SELECT 1 + (i * 7) % 120, 'Deal ' || i, (i * 137 % 10000) + 0.5,
       (ARRAY['open', 'won', 'lost'])[1 + i % 3]
  FROM generate_series(1, 300) AS i;

CREATE VIEW open_pipeline AS
SELECT c.tenant_id, count(*) AS deals, sum(d.amount) AS total
  FROM deals d JOIN contacts c ON c.id = d.contact_id
 WHERE d.stage = 'open'
 GROUP BY c.tenant_id;

-- A lookup that also writes the audit log: a read with a side effect.
CREATE FUNCTION find_contact(wanted text) RETURNS SETOF contacts
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO audit_log (actor, action) VALUES (current_user, 'lookup ' || wanted);
    RETURN QUERY SELECT * FROM contacts WHERE name = wanted;
END
$$;

CREATE ROLE tenant_acme;
CREATE ROLE tenant_globex;
ALTER TABLE contacts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON contacts USING (tenant_id = substring(current_user FROM 8));
GRANT SELECT, INSERT, UPDATE ON contacts TO tenant_acme, tenant_globex;
