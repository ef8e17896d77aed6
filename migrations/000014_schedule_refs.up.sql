-- Public schedule ids (issue 20): 128 random bits, so that an id
-- cannot be guessed; rows stored before keep a NULL ref and their
-- numeric id. Lookups by the user's own thread use schedules_thread.
ALTER TABLE schedules ADD COLUMN ref TEXT;
CREATE UNIQUE INDEX schedules_ref ON schedules (ref);
CREATE INDEX schedules_thread ON schedules (user_id, thread_key, status);
