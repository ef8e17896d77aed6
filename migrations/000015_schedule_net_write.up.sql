-- A watching cell may write to the network (POST, …) only when its
-- create was approved as code.network_write in an untrusted-free turn
-- (issue 20); every other cell runs with GET/HEAD only.
ALTER TABLE schedules ADD COLUMN net_write INTEGER NOT NULL DEFAULT 0;
