-- A store whose server role may create roles (PostgreSQL 15 gives a
-- non-superuser no CREATEROLE by default): the SQL servers' authority
-- case (plans/dbhub-roles.toml, docs/postgres-probe.md). reader is a group
-- that can read orders.
ALTER ROLE server CREATEROLE;
CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL);
INSERT INTO orders (item) VALUES ('pen'), ('ink'), ('paper');
CREATE ROLE reader NOLOGIN;
GRANT SELECT ON orders TO reader;
