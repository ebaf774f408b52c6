-- An inner join of two bounded tables, one side an aggregate that updates
-- in streaming mode: only the final matches come out.
SET 'execution.runtime-mode' = 'batch';
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, customer STRING, amount INT);
CREATE TABLE customers (name STRING, city STRING);
INSERT INTO orders VALUES (1, 'alice', 10), (2, 'bob', 5), (3, 'alice', 30), (4, 'carol', 1), (5, 'bob', 2), (6, 'nobody', 9);
INSERT INTO customers VALUES ('alice', 'Paris'), ('bob', 'Oslo'), ('carol', 'Rome'), ('dave', 'Lima');
SELECT c.name, c.city, t.total
FROM customers c
JOIN (SELECT customer, SUM(amount) AS total FROM orders GROUP BY customer) t
  ON c.name = t.customer;
