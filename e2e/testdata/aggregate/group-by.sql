-- GROUP BY with every aggregate, a computed key and HAVING; the result
-- materializes the aggregate's changelog (+I, -U/+U).
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (
    customer STRING,
    amount DECIMAL(10, 2),
    qty INT,
    weight DOUBLE
);
INSERT INTO orders VALUES
    ('alice', 10.50, 1, 1.5),
    ('alice', 4.25, 2, 2.0),
    ('bob', 99.99, 5, 0.5),
    ('carol', 1.00, NULL, NULL),
    ('alice', 0.25, 4, 1.0),
    ('bob', 0.01, 2, 4.0);
SELECT
    customer,
    COUNT(*) AS orders,
    COUNT(qty) AS with_qty,
    SUM(qty) AS qty,
    AVG(qty) AS avg_qty,
    MIN(amount) AS smallest,
    MAX(amount) AS largest,
    SUM(amount) AS total,
    AVG(amount) AS avg_amount,
    AVG(weight) AS avg_weight
FROM orders
GROUP BY customer
HAVING SUM(amount) > 1;
