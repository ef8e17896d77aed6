package kairos

import "time"

// Travel settings of the schedules section: what a recurring schedule
// does when its user's zone changes after it was created.
const (
	// TravelKeepZone keeps the zone the schedule was created in: "08:00
	// Europe/Berlin" stays 08:00 Berlin time wherever the user is.
	TravelKeepZone = "keep_zone"
	// TravelFollowUser keeps the wall-clock time in the user's new zone:
	// "08:00" becomes 08:00 where the user now is.
	TravelFollowUser = "follow_user"
)

// SchedulesPolicy is the policy's `schedules` section: reminders, tasks
// and watching cells (the `schedule` tool).
type SchedulesPolicy struct {
	// Enabled offers the schedule tool, /reminders and the runner; when
	// false the tool is absent from the tool list.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// MaxPerUser is the most active schedules one user may have.
	MaxPerUser int `yaml:"max_per_user" json:"max_per_user"`
	// MinInterval (ISO-8601 duration) is the shortest repeat of a
	// recurring task or watching cell unless the kind's own key says
	// otherwise. Every gap over a full cycle of the rule counts, not only
	// the first.
	MinInterval Duration `yaml:"min_interval" json:"min_interval"`
	// ReminderMinInterval, TaskMinInterval and CellMinInterval are the
	// shortest repeat of each kind; a zero task or cell value takes
	// MinInterval.
	ReminderMinInterval Duration `yaml:"reminder_min_interval" json:"reminder_min_interval"`
	TaskMinInterval     Duration `yaml:"task_min_interval" json:"task_min_interval"`
	CellMinInterval     Duration `yaml:"cell_min_interval" json:"cell_min_interval"`
	// LateThreshold (ISO-8601 duration): a firing found later than this
	// after its time (downtime) is reported as missed instead of sent.
	LateThreshold Duration `yaml:"late_threshold" json:"late_threshold"`
	// TasksMayUseTools lets a task's agent turn call tools (search,
	// memory, code); false answers from the model alone.
	TasksMayUseTools bool `yaml:"tasks_may_use_tools" json:"tasks_may_use_tools"`
	// Travel is TravelKeepZone or TravelFollowUser.
	Travel string `yaml:"travel" json:"travel"`
	// DefaultTime ("HH:MM") is the time of day a schedule given a day
	// but no time gets ("friday"), stated in its approval; empty: the
	// schedule tool asks for the time. A day alone never fires at
	// midnight.
	DefaultTime string `yaml:"default_time" json:"default_time"`
}

// DefaultTimeOfDay is DefaultTime's hour and minute; ok is false when it
// is empty or not HH:MM.
func (s SchedulesPolicy) DefaultTimeOfDay() (hour, minute int, ok bool) {
	t, err := time.Parse("15:04", s.DefaultTime)
	if err != nil || len(s.DefaultTime) != 5 {
		return 0, 0, false
	}
	return t.Hour(), t.Minute(), true
}

// Schedules defaults.
const (
	DefaultMaxSchedulesPerUser = 50
	DefaultScheduleMinInterval = "PT1H"
	DefaultReminderMinInterval = "PT1M"
	DefaultLateThreshold       = "PT12H"
)

// DefaultSchedulesPolicy returns the built-in schedules section.
func DefaultSchedulesPolicy() SchedulesPolicy {
	return SchedulesPolicy{Enabled: true, MaxPerUser: DefaultMaxSchedulesPerUser, MinInterval: MustDuration(DefaultScheduleMinInterval),
		ReminderMinInterval: MustDuration(DefaultReminderMinInterval),
		LateThreshold:       MustDuration(DefaultLateThreshold), TasksMayUseTools: true, Travel: TravelKeepZone}
}

// MinIntervalFor is the shortest repeat allowed for a schedule kind.
func (s SchedulesPolicy) MinIntervalFor(kind string) Duration {
	switch kind {
	case ScheduleReminder:
		return s.ReminderMinInterval
	case ScheduleTask:
		if s.TaskMinInterval.Approx() > 0 {
			return s.TaskMinInterval
		}
	case ScheduleCell:
		if s.CellMinInterval.Approx() > 0 {
			return s.CellMinInterval
		}
	}
	return s.MinInterval
}
