-- acme's orders for the refund cases (experiments/agent/refund-cases/):
-- short carts, a cart with one item already refunded, and two long carts
-- whose refund takes a call per item. globex's order is invisible to
-- acme's token.
INSERT INTO orders(id, tenant_id, customer, email, placed_on) VALUES
    ('o_1001', 'acme', 'Bea Park', 'bea.park@example.org', '2025-12-02'),
    ('o_1002', 'acme', 'Chen Wu', 'chen.wu@example.org', '2025-12-05'),
    ('o_1003', 'acme', 'Dev Patel', 'dev.patel@example.org', '2025-12-09'),
    ('o_1004', 'acme', 'Eli Moreau', 'eli.moreau@example.org', '2025-12-11'),
    ('o_1005', 'acme', 'Fay Olsen', 'fay.olsen@example.org', '2025-12-14'),
    ('o_2001', 'globex', 'Gus Lind', 'gus.lind@example.org', '2025-12-03');
INSERT INTO order_items(id, order_id, name, price_cents) VALUES
    ('i_1001_1', 'o_1001', 'Wool scarf', 3900),
    ('i_1001_2', 'o_1001', 'Knit hat', 2400),
    ('i_1002_1', 'o_1002', 'Stoneware mug', 1800),
    ('i_1002_2', 'o_1002', 'Stoneware mug', 1800),
    ('i_1002_3', 'o_1002', 'Teapot', 4500),
    ('i_1003_1', 'o_1003', 'Trail shoes', 11900),
    ('i_1003_2', 'o_1003', 'Running socks', 1400),
    ('i_1004_1', 'o_1004', 'Desk lamp', 6500),
    ('i_1004_2', 'o_1004', 'Lamp shade', 2200),
    ('i_1004_3', 'o_1004', 'LED bulb', 900),
    ('i_1004_4', 'o_1004', 'Cable clips', 600),
    ('i_1004_5', 'o_1004', 'Desk mat', 2800),
    ('i_1005_1', 'o_1005', 'Linen sheet', 7400),
    ('i_1005_2', 'o_1005', 'Pillow case', 1900),
    ('i_1005_3', 'o_1005', 'Pillow case', 1900),
    ('i_1005_4', 'o_1005', 'Duvet cover', 8900),
    ('i_1005_5', 'o_1005', 'Throw blanket', 5600),
    ('i_1005_6', 'o_1005', 'Gift card', 2500),
    ('i_2001_1', 'o_2001', 'Wool scarf', 3900);
-- Dev Patel's socks were refunded before the suite starts.
INSERT INTO refunds(id, tenant_id, order_id, item_id, amount_cents, at) VALUES
    ('rf_i_1003_2', 'acme', 'o_1003', 'i_1003_2', 1400, 1765000000);
