-- LEFT JOIN with a non-equality between the sides and a condition on the
-- preserved side: an order whose shipments all fail the condition, or that
-- fails it itself, is emitted once, padded with NULLs.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, amount INT, ts INT);
CREATE TABLE shipments (ship_id INT, order_id INT, ts INT);
INSERT INTO orders VALUES (1, 50, 10), (2, 50, 20), (3, 5, 30), (4, 70, 40), (5, 80, 50);
INSERT INTO shipments VALUES (100, 1, 15), (101, 1, 5), (102, 2, 10), (103, 3, 35), (104, 4, 41), (105, 4, 42), (106, NULL, 99);
SELECT o.id, s.ship_id, s.ts
FROM orders o
LEFT JOIN shipments s
  ON o.id = s.order_id AND s.ts > o.ts AND o.amount > 10;
