-- A FULL JOIN in batch mode: a row that finds a match later is not first
-- emitted padded with NULLs and then retracted; only the final rows come
-- out, the unmatched ones of either side padded.
SET 'execution.runtime-mode' = 'batch';
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, product STRING);
CREATE TABLE shipments (ship_id INT, order_id INT);
INSERT INTO orders VALUES (1, 'phone'), (2, 'pad'), (3, 'book'), (CAST(NULL AS INT), 'ghost');
INSERT INTO shipments VALUES (100, 1), (101, 1), (102, 3), (103, 7), (104, CAST(NULL AS INT));
SELECT o.id, o.product, s.ship_id
FROM orders o
FULL JOIN shipments s
  ON o.id = s.order_id;
