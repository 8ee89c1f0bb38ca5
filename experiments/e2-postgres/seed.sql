-- E2 on PostgreSQL (lab/src/postgres/e2.rs): the store dbhub's execute_sql
-- is handed. The server's role may create roles (PostgreSQL 15 gives a
-- non-superuser no CREATEROLE by default). orders is what a grant is
-- about; credential_audit is the table where the application behind the
-- server records each login it issues, password and all.
ALTER ROLE server CREATEROLE;
CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL);
INSERT INTO orders (item) VALUES ('pen'), ('ink'), ('paper');
CREATE TABLE credential_audit (
    id integer PRIMARY KEY,
    rolname text NOT NULL,
    password text NOT NULL
);
