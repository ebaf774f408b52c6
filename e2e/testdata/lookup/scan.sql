-- Outside a lookup join a mysql table is read once, as a bounded source.
-- requires: mysql
-- compare: final
CREATE TEMPORARY TABLE products (product_id INT, region STRING, product_name STRING, price DECIMAL(10, 2)) WITH (
  'connector' = 'mysql',
  'hostname' = '${MYSQL_HOST}',
  'port' = '${MYSQL_PORT}',
  'username' = '${MYSQL_USER}',
  'password' = '${MYSQL_PASSWORD}',
  'database-name' = 'lookup_e2e',
  'table-name' = 'products'
);
SELECT region, COUNT(*) AS n, SUM(price) AS total FROM products GROUP BY region;
