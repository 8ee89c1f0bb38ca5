-- Two tenants of one CRM, one client each. Tokens are stored as their
-- blake3 digests: acme-agent's token is "acme-agent-token", globex-agent's
-- "globex-agent-token" (fixtures, not secrets).
INSERT INTO tenants(id, name) VALUES ('acme', 'Acme Corp'), ('globex', 'Globex');
INSERT INTO clients(token_digest, client_id, tenant_id) VALUES
    ('0dca57598c408e7e05b3f50b7e8c0472af4f5bd56de88f15134238639d2f673b', 'acme-agent', 'acme'),
    ('6a47d6bc2a24b2555b02f045d4c58dddce90835f2d153a0eb260ca4a959b563a', 'globex-agent', 'globex');
-- acme's contacts. Dana Kimball's name contains "Dana Kim": a search by
-- name finds her too, and she is not the one to delete.
INSERT INTO contacts(id, tenant_id, name, email, company) VALUES
    ('c_101', 'acme', 'Ana Lopez', 'ana.lopez@initech.example', 'Initech'),
    ('c_152', 'acme', 'Dana Kimball', 'dkimball@umbrella.example', 'Umbrella');
-- globex has its own Dana Kim, invisible to acme's token.
INSERT INTO contacts(id, tenant_id, name, email, company) VALUES
    ('c_201', 'globex', 'Dana Kim', 'dana@northwind.example', 'Northwind');
