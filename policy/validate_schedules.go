package policy

import "github.com/kairos-agent/kairos"

// MaxSchedulesPerUser bounds schedules.max_per_user.
const MaxSchedulesPerUser = 10000

// TravelSettings are the values of schedules.travel.
var TravelSettings = []string{kairos.TravelKeepZone, kairos.TravelFollowUser}

func validateSchedules(c *checker, s *kairos.SchedulesPolicy) {
	if s.MaxPerUser < 1 || s.MaxPerUser > MaxSchedulesPerUser {
		c.add("schedules.max_per_user", "must be between 1 and %d, got %d", MaxSchedulesPerUser, s.MaxPerUser)
	}
	c.dur("schedules.min_interval", s.MinInterval, false)
	c.dur("schedules.reminder_min_interval", s.ReminderMinInterval, false)
	c.dur("schedules.task_min_interval", s.TaskMinInterval, false)
	c.dur("schedules.cell_min_interval", s.CellMinInterval, false)
	c.dur("schedules.late_threshold", s.LateThreshold, true)
	c.enum("schedules.travel", s.Travel, TravelSettings)
	if s.DefaultTime != "" && !hhmm.MatchString(s.DefaultTime) {
		c.add("schedules.default_time", "%q is not a time of day HH:MM (00:00 to 23:59); empty asks for the time", s.DefaultTime)
	}
}
