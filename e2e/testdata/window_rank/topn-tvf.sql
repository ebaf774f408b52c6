-- Window Top-N over a window function (Flink's docs' example): the three
-- highest bids of every 10-minute window, with their row number, a tie in
-- price ranked by arrival. With one-row batches the watermark rises after
-- every row: the bid at 08:04 arrives after the one at 08:17 (watermark
-- 08:16:59), when its window has fired, and is dropped as late.
-- The input comes in two INSERTs, so that the savepoint test can stop
-- between them with windows open.
-- compare: final
SET 'parallelism.default' = '2';
SET 'braid.exec.source.batch-size' = '1';
CREATE TABLE bid (
    bidtime TIMESTAMP(3),
    price DECIMAL(10, 2),
    item STRING,
    supplier_id STRING,
    WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
);
INSERT INTO bid VALUES
    (TIMESTAMP '2020-04-15 08:05:00', 4.00, 'A', 'supplier1'),
    (TIMESTAMP '2020-04-15 08:06:00', 4.00, 'C', 'supplier2'),
    (TIMESTAMP '2020-04-15 08:07:00', 2.00, 'G', 'supplier1'),
    (TIMESTAMP '2020-04-15 08:08:00', 2.00, 'B', 'supplier3'),
    (TIMESTAMP '2020-04-15 08:09:00', 5.00, 'D', 'supplier4'),
    (TIMESTAMP '2020-04-15 08:11:00', 2.00, 'B', 'supplier3');
INSERT INTO bid VALUES
    (TIMESTAMP '2020-04-15 08:13:00', 1.00, 'E', 'supplier1'),
    (TIMESTAMP '2020-04-15 08:15:00', 3.00, 'H', 'supplier2'),
    (TIMESTAMP '2020-04-15 08:17:00', 6.00, 'F', 'supplier5'),
    (TIMESTAMP '2020-04-15 08:04:00', 9.00, 'L', 'supplier6');
SELECT bidtime, price, item, supplier_id, window_start, window_end, rownum FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rownum <= 3;
