-- A FULL JOIN with a residual over an updating aggregate: as the totals
-- change, matches come and go and padded rows are retracted and come back.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (customer STRING, amount INT);
CREATE TABLE tiers (customer STRING, tier STRING, min_total INT);
INSERT INTO orders VALUES ('alice', 10), ('bob', 5), ('alice', 30), ('carol', 1), ('bob', 2), ('alice', 5);
INSERT INTO tiers VALUES ('alice', 'gold', 40), ('alice', 'silver', 20), ('bob', 'gold', 40), ('bob', 'bronze', 5), ('dave', 'gold', 0);
SELECT t.customer, t.total, s.tier
FROM (SELECT customer, SUM(amount) AS total FROM orders GROUP BY customer) AS t
FULL JOIN tiers s
  ON t.customer = s.customer AND t.total >= s.min_total;
