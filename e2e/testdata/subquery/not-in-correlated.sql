-- Correlated NOT IN: among the items of the same order. A NULL amount
-- passes only when its order has no items; amount 1 is among order 3's.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, customer STRING, amount INT);
CREATE TABLE items (oid INT, qty INT);
INSERT INTO orders VALUES (1, 'alice', 10), (2, 'bob', 5), (3, 'alice', 1), (4, 'dave', CAST(NULL AS INT)), (5, 'erin', CAST(NULL AS INT)), (CAST(NULL AS INT), 'zed', 2);
INSERT INTO items VALUES (1, 2), (1, 5), (3, 1), (4, 7), (9, 4);
SELECT id, amount FROM orders o WHERE amount NOT IN (SELECT qty FROM items i WHERE i.oid = o.id);
