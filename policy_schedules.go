package kairos

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
	// recurring task or watching cell (reminders are not limited).
	MinInterval Duration `yaml:"min_interval" json:"min_interval"`
	// LateThreshold (ISO-8601 duration): a firing found later than this
	// after its time (downtime) is reported as missed instead of sent.
	LateThreshold Duration `yaml:"late_threshold" json:"late_threshold"`
	// TasksMayUseTools lets a task's agent turn call tools (search,
	// memory, code); false answers from the model alone.
	TasksMayUseTools bool `yaml:"tasks_may_use_tools" json:"tasks_may_use_tools"`
	// Travel is TravelKeepZone or TravelFollowUser.
	Travel string `yaml:"travel" json:"travel"`
}

// Schedules defaults.
const (
	DefaultMaxSchedulesPerUser = 50
	DefaultScheduleMinInterval = "PT1H"
	DefaultLateThreshold       = "PT12H"
)

// DefaultSchedulesPolicy returns the built-in schedules section.
func DefaultSchedulesPolicy() SchedulesPolicy {
	return SchedulesPolicy{Enabled: true, MaxPerUser: DefaultMaxSchedulesPerUser, MinInterval: MustDuration(DefaultScheduleMinInterval),
		LateThreshold: MustDuration(DefaultLateThreshold), TasksMayUseTools: true, Travel: TravelKeepZone}
}
