-- values computed at run time (not constant-folded): a column of a VALUES table
(SELECT x / 0 FROM (VALUES (CAST(7 AS DOUBLE)), (CAST(8 AS DOUBLE))) AS t(x) LIMIT 1)
(SELECT x / y FROM (VALUES (CAST(7 AS DOUBLE), CAST(0 AS DOUBLE)), (CAST(8 AS DOUBLE), CAST(0 AS DOUBLE))) AS t(x, y) LIMIT 1)
(SELECT x / y FROM (VALUES (CAST(0 AS DOUBLE), CAST(0 AS DOUBLE)), (CAST(8 AS DOUBLE), CAST(0 AS DOUBLE))) AS t(x, y) LIMIT 1)
(SELECT x / y FROM (VALUES (7.0, 0), (8.0, 0)) AS t(x, y) LIMIT 1)
(SELECT MAX(x / y) FROM (VALUES (7, 0), (8, 1)) AS t(x, y))
(SELECT MAX(CAST(s AS INT)) FROM (VALUES ('12'), ('x')) AS t(s))
(SELECT MAX(TRY_CAST(s AS INT)) FROM (VALUES ('12'), ('x')) AS t(s))
