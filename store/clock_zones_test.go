package store_test

import (
	"context"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// SessionZones answers what LoadClockState would for the two zones.
func TestSessionZonesAgreesWithClockState(t *testing.T) {
	ctx := context.Background()
	s := store.NewClockStore(storetest.MustOpenDB(t))
	str := func(v string) *string { return &v }
	for _, tc := range []struct {
		name, user, thread string
		patch              *kairos.ClockPatch
		wantSession        string
		wantDefault        string
	}{
		{"nothing stored", "telegram:1", "agent:main:telegram:dm:1", nil, "", ""},
		{"user default", "telegram:2", "agent:main:telegram:dm:2", &kairos.ClockPatch{DefaultTZ: str("Europe/Lisbon")}, "", "Europe/Lisbon"},
		{"thread override", "telegram:3", "agent:main:telegram:dm:3", &kairos.ClockPatch{SessionTZ: str("Asia/Tokyo")}, "Asia/Tokyo", ""},
		{"both", "telegram:4", "agent:main:telegram:dm:4", &kairos.ClockPatch{SessionTZ: str("Asia/Tokyo"), DefaultTZ: str("America/Bogota")}, "Asia/Tokyo", "America/Bogota"},
		{"no user", "", "agent:main:telegram:group:-5", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.patch != nil {
				if err := s.SaveClockState(ctx, tc.user, tc.thread, *tc.patch); err != nil {
					t.Fatal(err)
				}
			}
			session, def, err := s.SessionZones(ctx, tc.user, tc.thread)
			if err != nil {
				t.Fatal(err)
			}
			if session != tc.wantSession || def != tc.wantDefault {
				t.Fatalf("SessionZones = %q, %q; want %q, %q", session, def, tc.wantSession, tc.wantDefault)
			}
			st, err := s.LoadClockState(ctx, tc.user, tc.thread)
			if err != nil {
				t.Fatal(err)
			}
			if st.Thread.SessionTZ != session || st.User.DefaultTZ != def {
				t.Fatalf("LoadClockState has %q, %q", st.Thread.SessionTZ, st.User.DefaultTZ)
			}
		})
	}
}
