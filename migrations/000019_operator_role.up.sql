-- A database grant's role: 'allowed' (kairos access allow, /pair) or
-- 'operator' (the first operator, who claimed the bot with /start <code>).
ALTER TABLE access_grants ADD COLUMN role TEXT NOT NULL DEFAULT 'allowed';
