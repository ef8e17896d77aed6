-- What the approval of a skill version showed it may use (issue 31): the
-- hosts, HTTP methods, secret names and cell budget in force when it was
-- approved, as JSON. A run gets the part of it the policy still allows,
-- so widening the policy later (POST allowed, a budget raised) widens no
-- approved skill. '' for versions approved before: their grant is read
-- from risk and capabilities (tools/skill).
ALTER TABLE skill_versions ADD COLUMN approved_grant TEXT NOT NULL DEFAULT '';
