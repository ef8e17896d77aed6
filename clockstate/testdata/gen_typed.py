"""The forms people type (issue 21, follow-up), for the `chat` category of
corpus.tsv: minutes in words before to/past, approximate hours ("3ish"),
the abbreviations of chat ("wk", "hrs", "tmrw"), two amounts offered ("in
20 or 30 mins"), "every second tuesday", "first thing monday", "after
lunch". Each expected value is computed here from the meaning we intend,
with zoneinfo, never from the Go parser. Imported by gen_corpus.py.

Meanings (doc/design.md "Time parser", doc/RATIONALE.md): a bare hour
with minutes in words ("ten to five") asks am or pm, as "quarter past 3"
does, unless am/pm or a part of day says which; "3ish" is the time "3"
(ParseResult has no notion of approximate); two amounts are a question
naming both; "every second tuesday" is every 2 weeks on Tuesday; "first
thing" is the start of the morning window (06:00) of the day named, or the
bare hour said with it in the morning; "after lunch" runs from the end of
the lunch window (14:00) to the end of the afternoon (18:00), "before
lunch" is the morning (06:00-12:00); a part of day without a date is
today's unless it is over.
"""
import datetime as dt

from gen_chat import UTC, coming, iso, local, next_at, on_day, today, z


def monday_of(d, weeks=0):
    return d - dt.timedelta(days=d.weekday()) + dt.timedelta(days=7 * weeks)


def cal(tz, ref, days=0, years=0):
    """ref moved by calendar days or years in tz, its wall time kept."""
    r = ref.astimezone(z(tz))
    d = r.date() + dt.timedelta(days=days)
    d = d.replace(year=d.year + years)
    return local(tz, d, r.hour, r.minute, r.second)


def typed_forms(add):
    refs = [dt.datetime(2026, 11, 25, 10, 0, tzinfo=UTC),   # Wednesday
            dt.datetime(2026, 7, 14, 19, 40, tzinfo=UTC),   # Tuesday evening in Europe, night in Asia
            dt.datetime(2027, 1, 9, 23, 0, tzinfo=UTC),     # Saturday night in Europe, Sunday in Asia
            dt.datetime(2026, 3, 27, 13, 45, tzinfo=UTC)]   # Friday, two days before Europe's DST
    zones = ["Europe/Lisbon", "Europe/London", "America/New_York", "Australia/Sydney", "Asia/Kolkata"]
    for ref in refs:
        for tz in zones:
            t0 = today(tz, ref)
            tom = t0 + dt.timedelta(days=1)

            def A(text, t, end=None, repeat=""):
                add("chat", text, tz, ref, "absolute", iso(t), iso(end) if end else "-", src="typed", repeat=repeat)

            def D(text, d, days=1, repeat=""):
                add("chat", text, tz, ref, "absolute", iso(local(tz, d)), iso(local(tz, d + dt.timedelta(days=days))),
                    src="typed", repeat=repeat)

            def R(text, t):
                add("chat", text, tz, ref, "relative", iso(t), src="typed")

            def Q(text, ask):
                add("chat", text, tz, ref, "question", ask=ask, src="typed")

            # minutes in words before to/past
            Q("ten to five", "4:50am or 4:50pm")
            Q("twenty past 3", "3:20am or 3:20pm")
            Q("quarter past 3", "3:15am or 3:15pm")
            Q("remind me at ten to five", "4:50am or 4:50pm")
            A("five to midnight", next_at(tz, ref, 23, 55))
            A("ten past midnight", next_at(tz, ref, 0, 10))
            A("ten to five pm", next_at(tz, ref, 16, 50))
            A("twenty past 3pm", next_at(tz, ref, 15, 20))
            A("ten to five tomorrow afternoon", local(tz, tom, 16, 50))
            A("twenty five past 7 tonight", local(tz, t0, 19, 25))
            A("twenty-two minutes to 4 in the afternoon", next_at(tz, ref, 15, 38))
            A("five to six in the morning", next_at(tz, ref, 5, 55))
            add("chat", "ten to five people", tz, ref, "invalid", src="typed")
            # approximately: the time itself
            Q("3ish", "3am or 3pm")
            Q("around 3ish", "3am or 3pm")
            Q("5-ish", "5am or 5pm")
            Q("tmrw 4ish", "4am or 4pm")
            A("3pm-ish", next_at(tz, ref, 15))
            A("3ish tomorrow afternoon", local(tz, tom, 15))
            A("7ish tonight", local(tz, t0, 19))
            A("noonish", next_at(tz, ref, 12))
            A("17:30ish", next_at(tz, ref, 17, 30))
            A("friday 10am-ish", local(tz, on_day(tz, ref, 4, 10), 10))
            # the abbreviations of chat
            D("next wk", monday_of(t0, 1), days=7)
            D("this wk", monday_of(t0), days=7)
            D("end of next wk", monday_of(t0, 1) + dt.timedelta(days=4))
            D("tuesday next wk", monday_of(t0, 1) + dt.timedelta(days=1))
            D("next yr", dt.date(t0.year + 1, 1, 1), days=(dt.date(t0.year + 2, 1, 1) - dt.date(t0.year + 1, 1, 1)).days)
            R("in 2 wks", cal(tz, ref, days=14))
            R("in a wk", cal(tz, ref, days=7))
            R("2 wks ago", cal(tz, ref, days=-14))
            R("in a yr", cal(tz, ref, years=1))
            R("in 3 hrs", ref + dt.timedelta(hours=3))
            R("in 1 hr 30 mins", ref + dt.timedelta(minutes=90))
            R("in 45 min", ref + dt.timedelta(minutes=45))
            R("in 30 secs", ref + dt.timedelta(seconds=30))
            R("in 10 sec", ref + dt.timedelta(seconds=10))
            R("5 mins ago", ref - dt.timedelta(minutes=5))
            for word in ["tmrw", "tmr", "tomoz", "2moro", "2morrow"]:
                A("%s at 9am" % word, local(tz, tom, 9))
            A("tomoz arvo", local(tz, tom, 12), local(tz, tom, 18))
            A("tmrw night", local(tz, tom, 18), local(tz, tom, 24))
            A("every 2 wks at 9am", next_at(tz, ref, 9), repeat="FREQ=WEEKLY;INTERVAL=2")
            # two amounts offered: a question naming both
            Q("in 20 or 30 mins", "in 20 minutes or in 30 minutes")
            Q("in 20-30 mins", "in 20 minutes or in 30 minutes")
            Q("in 20 to 30 minutes", "in 20 minutes or in 30 minutes")
            Q("in five or ten minutes", "in 5 minutes or in 10 minutes")
            Q("in a day or two", "in 1 day or in 2 days")
            Q("in an hour or two", "in 1 hour or in 2 hours")
            Q("in 2 or 3 wks", "in 2 weeks or in 3 weeks")
            Q("2 or 3 days ago", "2 days ago or 3 days ago")
            R("in forty-five mins", ref + dt.timedelta(minutes=45))
            # every second tuesday: every 2 weeks on Tuesday
            tue = t0 if t0.weekday() == 1 else coming(tz, ref, 1)
            D("every second tuesday", tue, repeat="FREQ=WEEKLY;INTERVAL=2;BYDAY=TU")
            D("every other tuesday", tue, repeat="FREQ=WEEKLY;INTERVAL=2;BYDAY=TU")
            six = t0 if t0.weekday() == 1 and local(tz, t0, 18) > ref else coming(tz, ref, 1)
            A("every 2nd tuesday at 6pm", local(tz, six, 18), repeat="FREQ=WEEKLY;INTERVAL=2;BYDAY=TU")
            nine = t0 if t0.weekday() == 0 and local(tz, t0, 9) > ref else coming(tz, ref, 0)
            A("every third monday at 9am", local(tz, nine, 9), repeat="FREQ=WEEKLY;INTERVAL=3;BYDAY=MO")
            Q("every second tuesday of the month", "second tuesday of each month")
            Q("every day this week", "which days of the week")
            # first thing: the start of the morning (06:00)
            A("first thing monday", local(tz, on_day(tz, ref, 0, 6), 6))
            A("first thing on friday", local(tz, on_day(tz, ref, 4, 6), 6))
            A("first thing tomorrow", local(tz, tom, 6))
            A("first thing tomorrow morning", local(tz, tom, 6))
            A("remind me first thing tmrw to call the bank", local(tz, tom, 6))
            A("first thing", next_at(tz, ref, 6))
            A("first thing monday at 8", local(tz, on_day(tz, ref, 0, 8), 8))
            # after lunch: 14:00-18:00; before lunch: the morning
            d = t0 if local(tz, t0, 18) > ref else tom
            A("after lunch", local(tz, d, 14), local(tz, d, 18))
            A("tomorrow after lunch", local(tz, tom, 14), local(tz, tom, 18))
            A("after lunch tmrw", local(tz, tom, 14), local(tz, tom, 18))
            f = on_day(tz, ref, 4, 14)
            A("friday after lunch", local(tz, f, 14), local(tz, f, 18))
            A("after lunch at 2", next_at(tz, ref, 14))
            d = t0 if local(tz, t0, 12) > ref else tom
            A("before lunch", local(tz, d, 6), local(tz, d, 12))
            # a time and a bare hour that is not it: asked, never one dropped
            Q("noon at 3", "two times")
            Q("5pm at 6", "two times")
            Q("tomorrow at 5pm at 6", "two times")
            Q("quarter past 3 at 15:20", "two times")
            Q("at 15:20 quarter past 3", "two times")
            Q("half past 2 at 9", "two times")
            Q("half nine at 10", "two times")
            A("quarter past 3 at 3:15pm", next_at(tz, ref, 15, 15))
            # a duration alone is from now only when nothing after it ties it to something else
            Q("45 mins of cardio is plenty", "45")
            Q("30 minutes before the meeting", "before")
            Q("remind me 30 minutes before the meeting", "before")
            R("90 mins please", ref + dt.timedelta(minutes=90))
            R("remind me 2 hours to stretch", ref + dt.timedelta(hours=2))
            # two days named: asked, never added up; two names of one day agree
            days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
            other = days[(tom.weekday() + 2) % 7]
            Q("tomorrow at 9am on " + other, "two days")
            Q(other + " 3pm tomorrow", "two days")
            Q("this morning tomorrow", "two days")
            A("tomorrow, " + days[tom.weekday()] + " at 9am", local(tz, tom, 9))
            A(days[tom.weekday()] + " tomorrow at 9am", local(tz, tom, 9))
            A("at 12 noon", next_at(tz, ref, 12))
            A("at 9 9pm", next_at(tz, ref, 21))
