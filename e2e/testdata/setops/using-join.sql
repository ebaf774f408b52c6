-- JOIN ... USING and NATURAL JOIN: each USING column shows once, first; in
-- a FULL join it is COALESCE of both sides. The USING join is over an
-- updating aggregate, whose retractions it follows.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, customer STRING, amount INT);
CREATE TABLE customers (customer STRING, city STRING);
INSERT INTO orders VALUES (1, 'alice', 10), (2, 'bob', 5), (3, 'alice', 7), (4, 'dave', 1);
INSERT INTO customers VALUES ('alice', 'Oslo'), ('bob', 'Rome'), ('carol', 'Lima');
SELECT customer, t.total, city
FROM (SELECT customer, SUM(amount) AS total FROM orders GROUP BY customer) AS t
NATURAL FULL JOIN customers;
