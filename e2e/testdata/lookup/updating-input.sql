-- A lookup join over an aggregate: each -U/+U of a count is looked up and
-- keeps its kind, so the final result holds the last count per product.
-- requires: mysql
-- compare: final
CREATE TEMPORARY TABLE orders (order_id STRING, product_id INT);
INSERT INTO orders VALUES ('o1', 1), ('o2', 2), ('o3', 1), ('o4', 3), ('o5', 1), ('o6', 2);
CREATE TEMPORARY TABLE products (product_id INT, region STRING, product_name STRING, price DECIMAL(10, 2)) WITH (
  'connector' = 'mysql',
  'hostname' = '${MYSQL_HOST}',
  'port' = '${MYSQL_PORT}',
  'username' = '${MYSQL_USER}',
  'password' = '${MYSQL_PASSWORD}',
  'database-name' = 'lookup_e2e',
  'table-name' = 'products'
);
SELECT t.product_id, t.n, p.region, p.product_name
FROM (SELECT product_id, COUNT(*) AS n FROM orders GROUP BY product_id) t
JOIN products FOR SYSTEM_TIME AS OF PROCTIME() AS p
ON t.product_id = p.product_id;
