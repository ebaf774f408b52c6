-- DISTINCT and FILTER aggregates and the variances over an upsert table:
-- its updates retract old rows, so a value leaves a distinct view when its
-- last row goes, and a filter decides for retractions too. An INT argument
-- gives an INT variance, truncated.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE sales (id INT, shop STRING, product STRING, qty INT, PRIMARY KEY (id) NOT ENFORCED);
INSERT INTO sales VALUES
    (1, 'north', 'pen', 2), (2, 'north', 'ink', 5), (3, 'north', 'pen', 3),
    (4, 'south', 'cap', 1), (5, 'south', 'cap', 4), (6, 'south', 'pad', NULL),
    (7, 'west', 'pen', 10);
INSERT INTO sales VALUES (3, 'north', 'pad', 6), (5, 'south', 'pen', 4), (7, 'east', 'pen', 10);
SELECT
    shop,
    COUNT(DISTINCT product) AS products,
    COUNT(*) FILTER (WHERE qty > 2) AS big,
    SUM(DISTINCT qty) AS distinct_qty,
    AVG(qty) FILTER (WHERE product <> 'pen') AS avg_other,
    COUNT(DISTINCT product) FILTER (WHERE qty IS NOT NULL) AS sold,
    VAR_POP(qty) AS var_pop,
    STDDEV_SAMP(qty) AS stddev_samp
FROM sales
GROUP BY shop;
