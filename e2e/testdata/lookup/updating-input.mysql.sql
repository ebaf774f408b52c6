CREATE DATABASE IF NOT EXISTS lookup_e2e;
DROP TABLE IF EXISTS lookup_e2e.products;
CREATE TABLE lookup_e2e.products (product_id INT, region VARCHAR(8), product_name VARCHAR(64), price DECIMAL(10,2), PRIMARY KEY (product_id, region));
INSERT INTO lookup_e2e.products VALUES (1, 'EU', 'phone', 199.00), (1, 'US', 'phone-us', 219.00), (2, 'EU', 'laptop', 999.50), (3, 'US', 'tablet', 399.00), (4, 'EU', NULL, 5.25);
