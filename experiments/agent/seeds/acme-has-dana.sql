-- acme already has Dana Kim.
INSERT INTO contacts(id, tenant_id, name, email, company) VALUES
    ('c_150', 'acme', 'Dana Kim', 'dana@northwind.example', 'Northwind');
