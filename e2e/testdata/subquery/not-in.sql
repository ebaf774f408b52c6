-- x NOT IN (subquery) with no NULL among the subquery's values: a NULL x
-- is never in the result (x NOT IN a non-empty set is NULL).
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, customer STRING, amount INT);
CREATE TABLE items (oid INT, qty INT);
INSERT INTO orders VALUES (1, 'alice', 10), (2, 'bob', 5), (3, 'alice', 1), (4, 'dave', CAST(NULL AS INT)), (5, 'erin', CAST(NULL AS INT)), (CAST(NULL AS INT), 'zed', 2);
INSERT INTO items VALUES (1, 2), (1, 5), (3, 1), (4, 7), (9, 4);
SELECT id FROM orders WHERE id NOT IN (SELECT oid FROM items);
