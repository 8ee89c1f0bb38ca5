-- E3 on PostgreSQL (lab/src/postgres/e3.rs): the store dbhub's execute_sql
-- is handed. The server's role may create roles; reader is a group that
-- can read orders, the second path a membership opens.
ALTER ROLE server CREATEROLE;
CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL);
INSERT INTO orders (item) VALUES ('pen'), ('ink'), ('paper');
CREATE ROLE reader NOLOGIN;
GRANT SELECT ON orders TO reader;
