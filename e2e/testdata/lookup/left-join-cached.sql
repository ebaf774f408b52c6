-- A LEFT lookup join AS OF a PROCTIME() attribute, by a key column and a
-- constant, with a residual on the looked-up row, through the JDBC
-- connector's options and a partial cache; NULL keys and missing keys are
-- padded.
-- requires: mysql
-- compare: final
CREATE TEMPORARY TABLE orders (order_id STRING, product_id INT, qty INT, pt AS PROCTIME());
INSERT INTO orders VALUES ('o1', 1, 2), ('o2', 2, 1), ('o3', 3, 5), ('o4', CAST(NULL AS INT), 1), ('o5', 1, 1), ('o6', 4, 3), ('o7', 9, 1);
CREATE TEMPORARY TABLE products (product_id INT, region STRING, product_name STRING, price DECIMAL(10, 2)) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:mysql://${MYSQL_HOST}:${MYSQL_PORT}/lookup_e2e',
  'table-name' = 'products',
  'username' = '${MYSQL_USER}',
  'password' = '${MYSQL_PASSWORD}',
  'lookup.cache' = 'PARTIAL',
  'lookup.partial-cache.max-rows' = '2',
  'lookup.partial-cache.expire-after-write' = '1 min'
);
SELECT o.order_id, p.product_name, o.qty * p.price AS total
FROM orders o
LEFT JOIN products FOR SYSTEM_TIME AS OF o.pt AS p
ON o.product_id = p.product_id AND p.region = 'EU' AND p.price < 500;
