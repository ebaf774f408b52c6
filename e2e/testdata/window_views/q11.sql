-- Nexmark q11 over the bid view: each bidder's sessions of bids at most
-- 10 seconds apart, as Flink's q11 writes it (a legacy SESSION group
-- window) and with the SESSION window function over the view and over a
-- subquery partitioned by bidder.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE nexmark (
    event_type INT,
    person ROW<id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING, dateTime TIMESTAMP(3), extra STRING>,
    auction ROW<id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING>,
    dateTime AS CASE
        WHEN event_type = 0 THEN person.dateTime
        WHEN event_type = 1 THEN auction.dateTime
        ELSE bid.dateTime
    END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
);
CREATE VIEW person AS
SELECT person.id AS id, person.name AS name, person.emailAddress AS emailAddress,
    person.creditCard AS creditCard, person.city AS city, person.state AS state,
    dateTime, person.extra AS extra
FROM nexmark WHERE event_type = 0;
CREATE VIEW auction AS
SELECT auction.id AS id, auction.itemName AS itemName, auction.description AS description,
    auction.initialBid AS initialBid, auction.reserve AS reserve, dateTime,
    auction.expires AS expires, auction.seller AS seller, auction.category AS category,
    auction.extra AS extra
FROM nexmark WHERE event_type = 1;
CREATE VIEW bid AS
SELECT bid.auction AS auction, bid.bidder AS bidder, bid.price AS price,
    bid.channel AS channel, bid.url AS url, dateTime, bid.extra AS extra
FROM nexmark WHERE event_type = 2;
-- Events in event-time order, so that no row is late whatever the
-- watermark's timing, in two INSERTs (a savepoint goes between them in
-- TestWindowViewSavepointRescale).
INSERT INTO nexmark VALUES
    (0, ROW(1000, 'Peter Smith', 'peter@nexmark.com', '1111 2222 3333 4444', 'Boise', 'ID', TIMESTAMP '2025-05-01 10:00:00', ''), NULL, NULL),
    (2, NULL, NULL, ROW(1001, 2001, 100, 'Google', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:01', '')),
    (1, NULL, ROW(1001, 'lamp', 'an old lamp', 50, 200, TIMESTAMP '2025-05-01 10:00:02', TIMESTAMP '2025-05-01 11:00:00', 1000, 10, ''), NULL),
    (2, NULL, NULL, ROW(1001, 2002, 250, 'Apple', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:03', '')),
    (2, NULL, NULL, ROW(1002, 2001, 300, 'Google', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:04', '')),
    (1, NULL, ROW(1002, 'desk', 'an oak desk', 100, 500, TIMESTAMP '2025-05-01 10:00:05', TIMESTAMP '2025-05-01 11:00:00', 1001, 11, ''), NULL),
    (0, ROW(1001, 'Kate Jones', 'kate@nexmark.com', '5555 6666 7777 8888', 'Bend', 'OR', TIMESTAMP '2025-05-01 10:00:06', ''), NULL, NULL),
    (2, NULL, NULL, ROW(1001, 2001, 120, 'Baidu', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:08', ''));
INSERT INTO nexmark VALUES
    (2, NULL, NULL, ROW(1002, 2003, 50, 'channel-7', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:12', '')),
    (0, ROW(1002, 'Luke White', 'luke@nexmark.com', '1234 5678 9012 3456', 'Kent', 'WA', TIMESTAMP '2025-05-01 10:00:14', ''), NULL, NULL),
    (2, NULL, NULL, ROW(1002, 2002, 400, 'Apple', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:15', '')),
    (1, NULL, ROW(1003, 'vase', 'a blue vase', 20, 0, TIMESTAMP '2025-05-01 10:00:21', TIMESTAMP '2025-05-01 11:00:00', 1000, 10, ''), NULL),
    (2, NULL, NULL, ROW(1001, 2001, 90, 'Facebook', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:27', '')),
    (2, NULL, NULL, ROW(1003, 2003, 75, 'channel-7', 'https://www.nexmark.com/item.htm?query=1', TIMESTAMP '2025-05-01 10:00:28', ''));
SELECT 'group window' AS how, B.bidder, COUNT(*) AS bid_count,
    SESSION_START(B.dateTime, INTERVAL '10' SECOND) AS starttime,
    SESSION_END(B.dateTime, INTERVAL '10' SECOND) AS endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)
UNION ALL
SELECT 'window function' AS how, bidder, COUNT(*) AS bid_count, window_start, window_end
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end
UNION ALL
SELECT 'subquery' AS how, bidder, COUNT(*) AS bid_count, window_start, window_end
FROM TABLE(SESSION((SELECT bidder, dateTime FROM bid) PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
