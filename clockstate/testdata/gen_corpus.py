#!/usr/bin/env python3
"""Writes corpus.tsv: the time-parser corpus (see corpus_test.go).

Expected values are computed here independently of the Go parser, with
Python's zoneinfo (fold=0 gives RFC 5545's "compatible" rule: a time in a
DST gap moves forward by the gap, a time in a fold takes the first
occurrence). The phrases follow the facts of the public test suites of
chrono (wanasit/chrono), Duckling (facebook/duckling), dateparser and
olebedev/when, and CLOCK.md's own cases. Run: python3 gen_corpus.py > corpus.tsv
"""
import datetime as dt
from zoneinfo import ZoneInfo
from gen_chat import on_day  # a weekday naming today: today while the time is ahead

UTC = dt.timezone.utc
rows = []

def z(tz):
    return UTC if tz in ("", "UTC") else ZoneInfo(tz)

def iso(t):
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

def local(tz, y, mo, d, h=0, mi=0, s=0):
    base = dt.datetime(y, mo, 1, tzinfo=z(tz)) + dt.timedelta(days=d - 1)
    return dt.datetime(base.year, base.month, base.day, h, mi, s, tzinfo=z(tz))

def add(cat, text, tz, ref, kind, start="-", end="-", ask="-", src="kairos", oos="", repeat=""):
    row = (cat, text, tz or "-", iso(ref), kind, start, end, ask, src, oos)
    rows.append(row + (repeat,) if repeat else row)

def refl(tz, ref):
    return ref.astimezone(z(tz))

def day(tz, ref, off):
    r = refl(tz, ref).date() + dt.timedelta(days=off)
    return r

def absT(cat, text, tz, ref, d, h, mi=0, s=0, src="kairos"):
    add(cat, text, tz, ref, "absolute", iso(local(tz, d.year, d.month, d.day, h, mi, s)), src=src)

def absDay(cat, text, tz, ref, d, src="kairos", days=1):
    a = local(tz, d.year, d.month, d.day)
    e = d + dt.timedelta(days=days)
    b = local(tz, e.year, e.month, e.day)
    add(cat, text, tz, ref, "absolute", iso(a), iso(b), src=src)

def nextT(tz, ref, h, mi=0, s=0):
    r = refl(tz, ref)
    d = r.date()
    t = local(tz, d.year, d.month, d.day, h, mi, s)
    if t < ref:
        d = d + dt.timedelta(days=1)
    return d

WD = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

REFS = [
    dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC),   # Wednesday
    dt.datetime(2013, 2, 12, 6, 30, tzinfo=UTC),   # Duckling's reference: Tue 2013-02-12 04:30 -02:00
    dt.datetime(2012, 8, 10, 3, 0, tzinfo=UTC),    # chrono's reference day: Fri 2012-08-10
    dt.datetime(2026, 2, 10, 3, 2, tzinfo=UTC),    # CLOCK.md examples
]
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo", "Australia/Sydney", "Asia/Kolkata",
         "Asia/Kathmandu", "Pacific/Chatham", "Pacific/Marquesas", "Australia/Lord_Howe"]

# ---- casual days (chrono casual, Duckling "today"/"tomorrow") ----
for tz in ZONES[:6]:
    for ref in REFS[:3]:
        absDay("casual", "today", tz, ref, day(tz, ref, 0), "chrono")
        absDay("casual", "tomorrow", tz, ref, day(tz, ref, 1), "chrono")
        absDay("casual", "yesterday", tz, ref, day(tz, ref, -1), "chrono")
        absDay("casual", "the day after tomorrow", tz, ref, day(tz, ref, 2), "duckling")
        absDay("casual", "the day before yesterday", tz, ref, day(tz, ref, -2), "duckling")
        absT("casual", "tomorrow at 5pm", tz, ref, day(tz, ref, 1), 17, src="chrono")
        absT("casual", "tomorrow noon", tz, ref, day(tz, ref, 1), 12, src="duckling")
        absT("casual", "remind me the day after tomorrow at 5pm to call Bob", tz, ref, day(tz, ref, 2), 17, src="issue")

# ---- weekdays ----
for tz in ["UTC", "Europe/Berlin", "Australia/Sydney", "America/New_York"]:
    for ref in REFS[:3]:
        r = refl(tz, ref)
        wd = r.weekday()
        monday = r.date() - dt.timedelta(days=wd)
        for i, name in enumerate(WD):
            ahead = (i - wd) % 7 or 7
            absDay("weekday", name.capitalize(), tz, ref, r.date() + dt.timedelta(days=ahead), "when")
            absDay("weekday", name + " of next week", tz, ref, monday + dt.timedelta(days=7 + i), "issue")
            absDay("weekday", "next week " + name, tz, ref, monday + dt.timedelta(days=7 + i), "duckling")
            absT("weekday", "on %s at 9am" % name, tz, ref, on_day(tz, ref, i, 9), 9, src="chrono")
            absDay("weekday", "a week from " + name.capitalize(), tz, ref, r.date() + dt.timedelta(days=ahead + 7), "issue")

# ---- written dates ----
DATES = [(2027, 6, 3), (2021, 3, 9), (2019, 3, 2), (2013, 2, 15), (2012, 8, 10), (2030, 12, 25), (2024, 2, 29)]
MON = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
def ordn(n):
    return "%d%s" % (n, "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th"))
for tz in ["UTC", "Asia/Tokyo", "America/New_York", "Europe/Berlin"]:
    ref = REFS[0]
    for (y, m, d) in DATES:
        dd = dt.date(y, m, d)
        absDay("date", "%s %d, %d" % (MON[m-1], d, y), tz, ref, dd, "chrono")
        absDay("date", "%s %d %s %d" % (WD[dd.weekday()].capitalize(), d, MON[m-1], y), tz, ref, dd, "dateparser")
        absDay("date", "%s of %s %d" % (ordn(d), MON[m-1], y), tz, ref, dd, "duckling")
        absDay("date", "%d-%02d-%02d" % (y, m, d), tz, ref, dd, "when")
        absT("datetime", "%s %s %d at 8:15am" % (MON[m-1], ordn(d), y), tz, ref, dd, 8, 15, src="issue")
        absT("datetime", "%s, %s %d, %d at 4 pm" % (WD[dd.weekday()], MON[m-1].lower(), d, y), tz, ref, dd, 16, src="issue")
        absT("datetime", "%d %s %d 18:30" % (d, MON[m-1][:3], y), tz, ref, dd, 18, 30, src="dateparser")
        absT("datetime", "%d-%02d-%02dT07:05:59" % (y, m, d), tz, ref, dd, 7, 5, 59, src="when")

# ---- times of day (next occurrence) ----
TIMES = [("3pm", 15, 0, 0), ("3:18am", 3, 18, 0), ("15:00", 15, 0, 0), ("07:05:59", 7, 5, 59), ("noon", 12, 0, 0),
         ("at 9:30 pm", 21, 30, 0), ("a quarter to 6pm", 17, 45, 0), ("quarter past noon", 12, 15, 0),
         ("half past 3pm", 15, 30, 0), ("10 past 9am", 9, 10, 0), ("23:59:59", 23, 59, 59), ("12am", 0, 0, 0),
         ("12pm", 12, 0, 0), ("8 p.m.", 20, 0, 0), ("1:02:03 pm", 13, 2, 3), ("20 minutes to 10pm", 21, 40, 0),
         ("midday", 12, 0, 0), ("at 14", 14, 0, 0)]
for tz in ZONES:
    for ref in REFS:
        for (text, h, mi, s) in TIMES:
            absT("time", text, tz, ref, nextT(tz, ref, h, mi, s), h, mi, s, src="chrono/duckling")

# ---- explicit zones ----
ZTXT = [("March 2, 2019 at 18:00:00 UTC+5:45", "2019-03-02T12:15:00Z"), ("2019-03-02 18:00 +05:45", "2019-03-02T12:15:00Z"),
        ("March 2, 2019 18:00 GMT+0800", "2019-03-02T10:00:00Z"), ("March 2, 2019 6pm UTC-9:30", "2019-03-03T03:30:00Z"),
        ("March 2, 2019 6pm UTC+12:45", "2019-03-02T05:15:00Z"), ("2019-03-02T18:00:00Z", "2019-03-02T18:00:00Z"),
        ("March 2, 2019 at 6pm Asia/Kolkata", "2019-03-02T12:30:00Z"), ("March 2, 2019 at 6pm Tokyo time", "2019-03-02T09:00:00Z"),
        ("March 2, 2019 at 18:00 -1200", "2019-03-03T06:00:00Z"), ("March 2, 2019 at 7:45pm +09:30", "2019-03-02T10:15:00Z"),
        ("March 2, 2019 noon in New York", "2019-03-02T17:00:00Z"), ("March 2, 2019 5pm in London", "2019-03-02T17:00:00Z")]
for tz in ["", "UTC", "Australia/Sydney", "America/Los_Angeles"]:
    for (text, want) in ZTXT:
        add("zone", text, tz, REFS[0], "absolute", want, src="chrono/duckling")
for tz in ["Australia/Sydney", "UTC", "Asia/Tokyo"]:
    for ref in REFS[:2]:
        for (text, h, place) in [("5pm in London", 17, "Europe/London"), ("noon in New York", 12, "America/New_York"),
                                 ("9am Tokyo time", 9, "Asia/Tokyo"), ("7:45pm +09:30", None, None), ("9am UTC+5:30", None, None)]:
            if place:
                absT("zone", text, place, ref, nextT(place, ref, h), h, src="issue")
                rows[-1] = rows[-1][:2] + (tz,) + rows[-1][3:]
        add("zone", "14:00 UTC - 16:30 UTC", tz, ref, "absolute",
            iso(local("UTC", *nextT("UTC", ref, 14).timetuple()[:3], 14)),
            iso(local("UTC", *nextT("UTC", ref, 14).timetuple()[:3], 16, 30)), src="issue")

# ---- durations (relative) ----
DUR = [("in 2.5 hours", dt.timedelta(hours=2.5)), ("in 2 hours 30 minutes", dt.timedelta(hours=2, minutes=30)),
       ("in 90 minutes", dt.timedelta(minutes=90)), ("in 45 seconds", dt.timedelta(seconds=45)),
       ("in half an hour", dt.timedelta(minutes=30)), ("in an hour", dt.timedelta(hours=1)),
       ("2 hours from now", dt.timedelta(hours=2)), ("an hour ago", dt.timedelta(hours=-1)),
       ("in 1.5 hours", dt.timedelta(hours=1.5)), ("in 2 hours and 15 minutes", dt.timedelta(hours=2, minutes=15)),
       ("in 24 hours", dt.timedelta(hours=24)), ("5 minutes ago", dt.timedelta(minutes=-5)),
       ("in 1 hour, 20 minutes", dt.timedelta(hours=1, minutes=20)), ("in 3h", dt.timedelta(hours=3)),
       ("in 0.25 hours", dt.timedelta(minutes=15))]
for tz in ["", "UTC", "America/New_York", "Asia/Kathmandu"]:
    for ref in REFS:
        for (text, d) in DUR:
            add("duration", text, tz, ref, "relative", iso(ref + d), src="duckling/chrono")
# calendar-day durations are counted in the anchor's calendar
for tz in ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"]:
    for ref in [dt.datetime(2026, 3, 7, 15, 0, tzinfo=UTC), dt.datetime(2026, 10, 30, 12, 0, tzinfo=UTC), REFS[0]]:
        r = refl(tz, ref)
        for (text, days, extra) in [("in 3 days", 3, 0), ("1.5 days ago", -1, -12), ("in 2 weeks", 14, 0), ("3 days ago", -3, 0), ("in 1.5 days", 1, 12)]:
            dd = r.date() + dt.timedelta(days=days)
            t = local(tz, dd.year, dd.month, dd.day, r.hour, r.minute, r.second) + dt.timedelta(hours=extra)
            add("duration", text, tz, ref, "relative", iso(t), src="dateparser")

# ---- ranges ----
for tz in ["UTC", "Europe/Berlin", "Australia/Sydney", "America/New_York"]:
    for ref in REFS[:3]:
        r = refl(tz, ref)
        wd = r.weekday()
        fri = on_day(tz, ref, 4, 8)
        add("range", "8:00 - 9:15 on Friday", tz, ref, "absolute", iso(local(tz, fri.year, fri.month, fri.day, 8)),
            iso(local(tz, fri.year, fri.month, fri.day, 9, 15)), src="issue")
        thu = on_day(tz, ref, 3, 9, 30)
        add("range", "9:30 - 11:00 on Thursday", tz, ref, "absolute", iso(local(tz, thu.year, thu.month, thu.day, 9, 30)),
            iso(local(tz, thu.year, thu.month, thu.day, 11)), src="issue")
        d = nextT(tz, ref, 15)
        add("range", "from 3 to 5pm", tz, ref, "absolute", iso(local(tz, d.year, d.month, d.day, 15)), iso(local(tz, d.year, d.month, d.day, 17)), src="issue")
        add("range", "3-5pm", tz, ref, "absolute", iso(local(tz, d.year, d.month, d.day, 15)), iso(local(tz, d.year, d.month, d.day, 17)), src="chrono")
        d = nextT(tz, ref, 14)
        add("range", "14:00 - 16:30", tz, ref, "absolute", iso(local(tz, d.year, d.month, d.day, 14)), iso(local(tz, d.year, d.month, d.day, 16, 30)), src="chrono")
        t1 = day(tz, ref, 1)
        add("range", "tomorrow from 10am to 11:30am", tz, ref, "absolute", iso(local(tz, t1.year, t1.month, t1.day, 10)), iso(local(tz, t1.year, t1.month, t1.day, 11, 30)), src="duckling")
        mon = (0 - wd) % 7
        wed = (2 - wd) % 7
        if wed < mon:
            wed += 7
        a, b = r.date() + dt.timedelta(days=mon), r.date() + dt.timedelta(days=wed + 1)
        add("range", "between Monday and Wednesday", tz, ref, "absolute", iso(local(tz, a.year, a.month, a.day)), iso(local(tz, b.year, b.month, b.day)), src="issue")

# ---- DST gaps and folds (compatible rule) ----
DST = [("America/New_York", "2026-03-08", 2, 30), ("America/New_York", "2026-11-01", 1, 30),
       ("Europe/London", "2026-03-29", 1, 30), ("Europe/London", "2026-10-25", 1, 30),
       ("Europe/Berlin", "2026-03-29", 2, 30), ("Europe/Berlin", "2026-10-25", 2, 30),
       ("Australia/Sydney", "2026-10-04", 2, 30), ("Australia/Sydney", "2026-04-05", 2, 30),
       ("Australia/Lord_Howe", "2026-10-04", 2, 15), ("Australia/Lord_Howe", "2026-04-05", 1, 45),
       ("Pacific/Auckland", "2026-09-27", 2, 30), ("Pacific/Auckland", "2026-04-05", 2, 30),
       ("America/Santiago", "2026-09-06", 0, 30), ("Pacific/Chatham", "2026-09-27", 3, 0)]
for (tz, ds, h, mi) in DST:
    y, m, d = map(int, ds.split("-"))
    ref = local(tz, y, m, d) - dt.timedelta(days=2)
    dd = dt.date(y, m, d)
    absT("dst", "%s at %d:%02d" % (ds, h, mi), tz, ref, dd, h, mi, src="CLOCK.md")
    absT("dst", "%s %d, %d %d:%02d" % (MON[m-1], d, y, h, mi), tz, ref, dd, h, mi, src="CLOCK.md")
    absDay("dst", "%s %d, %d" % (MON[m-1], d, y), tz, ref, dd, src="CLOCK.md")
    absT("dst", "%s %d, %d %d:%02d:30" % (MON[m-1], d, y, h, mi), tz, ref, dd, h, mi, 30, src="CLOCK.md")

# ---- floating (no anchor) ----
for text in ["9am", "tonight", "tomorrow 9am", "next friday", "at noon", "March 3", "tomorrow morning", "2026-03-08 09:00",
             "let's do 5:30pm", "next week", "midnight", "on 25/12", "June 3rd 2027 at 8:15am", "a quarter to 6pm",
             "8:00 - 9:15 on Friday", "Tuesday of next week", "07:05:59", "between Monday and Wednesday", "from 3 to 5pm",
             "the day after tomorrow", "a week from Monday", "tuesday, march 9, 2021 at 4 pm"]:
    for ref in REFS[:2]:
        add("floating", text, "", ref, "floating", ask="timezone", src="CLOCK.md")

# ---- abbreviations ----
jul, jan = dt.datetime(2026, 7, 15, 10, tzinfo=UTC), dt.datetime(2026, 1, 15, 10, tzinfo=UTC)
for tz in ["", "UTC", "America/New_York", "Europe/Berlin", "Australia/Sydney"]:
    for ref in [jul, jan]:
        for ab in ["IST", "BST", "CST"]:
            if tz == "" or tz == "UTC" or (tz == "Europe/Berlin") or tz == "Australia/Sydney" or tz == "America/New_York":
                add("abbrev", "5pm " + ab, tz, ref, "floating", ask=ab, src="CLOCK.md")
add("abbrev", "5pm EST", "America/New_York", jul, "floating", ask="EST", src="issue")
add("abbrev", "5pm EST", "America/New_York", jan, "absolute", iso(local("America/New_York", 2026, 1, 15, 17)), src="CLOCK.md")
add("abbrev", "5pm EDT", "America/New_York", jul, "absolute", iso(local("America/New_York", 2026, 7, 15, 17)), src="CLOCK.md")
add("abbrev", "5pm EDT", "America/New_York", jan, "floating", ask="EDT", src="CLOCK.md")
add("abbrev", "10am PT", "America/Los_Angeles", jul, "absolute", iso(local("America/Los_Angeles", 2026, 7, 15, 10)), src="CLOCK.md")
add("abbrev", "10am PST", "America/Los_Angeles", jul, "floating", ask="PST", src="CLOCK.md")
add("abbrev", "10am PST", "America/Los_Angeles", jan, "absolute", iso(local("America/Los_Angeles", 2026, 1, 15, 10)), src="CLOCK.md")
absT("abbrev", "9am CET", "Europe/Berlin", jan, nextT("Europe/Berlin", jan, 9), 9, src="CLOCK.md")
add("abbrev", "9am CET", "Europe/Berlin", jul, "floating", ask="CET", src="CLOCK.md")
absT("abbrev", "9am CEST", "Europe/Berlin", jul, nextT("Europe/Berlin", jul, 9), 9, src="CLOCK.md")
add("abbrev", "5pm EST", "", jan, "floating", ask="EST", src="CLOCK.md")
# An abbreviation of one zone only is read as it, the assumption stated (issue 32).
add("abbrev", "9am JST", "", jan, "absolute", iso(local("Asia/Tokyo", 2026, 1, 16, 9)), src="issue32")

# ---- slash dates ----
for tz in ["Europe/Berlin", "Europe/London", "Australia/Sydney", "Asia/Kolkata", "Pacific/Auckland"]:
    absDay("slash", "03/04/2027", tz, REFS[0], dt.date(2027, 4, 3), "dateparser")
    absDay("slash", "on 11/3", tz, REFS[0], dt.date(2027, 3, 11), "dateparser")
    absDay("slash", "25/12/2026", tz, REFS[0], dt.date(2026, 12, 25), "dateparser")
for tz in ["America/New_York", "America/Los_Angeles", "America/Chicago"]:
    absDay("slash", "03/04/2027", tz, REFS[0], dt.date(2027, 3, 4), "dateparser")
    absDay("slash", "on 11/3", tz, REFS[0], dt.date(2026, 11, 3), "dateparser")
    absDay("slash", "12/25/2026", tz, REFS[0], dt.date(2026, 12, 25), "dateparser")
for tz in ["UTC", "Asia/Tokyo", "America/Toronto"]:
    add("slash", "03/04/2027", tz, REFS[0], "question", ask="April", src="issue")
    add("slash", "on 11/3", tz, REFS[0], "question", ask="March", src="when")
    absDay("slash", "25/12/2026", tz, REFS[0], dt.date(2026, 12, 25), "dateparser")


# ---- assorted forms (chrono/Duckling/dateparser/when facts), Berlin, Wed 2026-07-15 12:00 ----
B, R = "Europe/Berlin", REFS[0]
def bd(y, m, d):
    return dt.date(y, m, d)
absT("assorted", "Sat at 10am", B, R, bd(2026, 7, 18), 10, src="kairos")
absT("assorted", "tonight at 8", B, R, bd(2026, 7, 15), 20, src="duckling")
absT("assorted", "8pm tonight", B, R, bd(2026, 7, 15), 20, src="duckling")
add("assorted", "3 weeks from now", B, R, "relative", iso(local(B, 2026, 8, 5, 12)), src="duckling")
# "a couple of days" offers 2 days and asks the time of day (issue 32: a vague amount gives no instant).
add("assorted", "in a couple of days", B, R, "question", ask="2 days", src="dateparser")
absT("assorted", "Dec 25th at noon", B, R, bd(2026, 12, 25), 12, src="chrono")
absDay("assorted", "25th December 2027", B, R, bd(2027, 12, 25), "dateparser")
absT("assorted", "next Tuesday at 3:30pm", B, R, bd(2026, 7, 21), 15, 30, src="chrono")
absT("assorted", "Friday 13:00", B, R, bd(2026, 7, 17), 13, src="when")
absT("assorted", "at 5 in the afternoon", B, R, bd(2026, 7, 15), 17, src="duckling")
add("assorted", "2 days from now", B, R, "relative", iso(local(B, 2026, 7, 17, 12)), src="when")
add("assorted", "two weeks ago", B, R, "relative", iso(local(B, 2026, 7, 1, 12)), src="chrono")
add("assorted", "this Friday evening", B, R, "absolute", iso(local(B, 2026, 7, 17, 18)), iso(local(B, 2026, 7, 17, 22)), src="chrono")
absT("assorted", "noon tomorrow", B, R, bd(2026, 7, 16), 12, src="duckling")
absT("assorted", "11pm yesterday", B, R, bd(2026, 7, 14), 23, src="duckling")
add("assorted", "in 10 mins", B, R, "relative", iso(R + dt.timedelta(minutes=10)), src="when")
add("assorted", "3 o'clock", B, R, "question", ask="3am or 3pm", src="kairos")
absT("assorted", "05:30", B, R, bd(2026, 7, 16), 5, 30, src="chrono")
add("assorted", "within 15 minutes", B, R, "relative", iso(R + dt.timedelta(minutes=15)), src="duckling")
absDay("assorted", "on 31.12.2026", B, R, bd(2026, 12, 31), "dateparser")
absT("assorted", "2026/12/31 9am", B, R, bd(2026, 12, 31), 9, src="dateparser")
add("assorted", "Aug 10 2012 12:00 GMT+0800", B, R, "absolute", "2012-08-10T04:00:00Z", src="chrono")
absT("assorted", "Sunday 7 PM", B, R, bd(2026, 7, 19), 19, src="chrono")
absT("assorted", "Thursday 9:30 - 11:00", B, R, bd(2026, 7, 16), 9, 30, src="chrono")
rows[-1] = rows[-1][:6] + (iso(local(B, 2026, 7, 16, 11)),) + rows[-1][7:]
absDay("assorted", "from Monday to Friday", B, R, bd(2026, 7, 20), "duckling", days=5)
absT("assorted", "Tues 10 am", B, R, bd(2026, 7, 21), 10, src="dateparser")
absT("assorted", "thurs at 3pm", B, R, bd(2026, 7, 16), 15, src="dateparser")
absT("assorted", "at 10 am on the 5th of May", B, R, bd(2027, 5, 5), 10, src="duckling")
absT("assorted", "Jan 2nd 2027 10:30", B, R, bd(2027, 1, 2), 10, 30, src="chrono")
add("assorted", "next month", B, R, "absolute", iso(local(B, 2026, 8, 1)), iso(local(B, 2026, 9, 1)), src="duckling")
add("assorted", "this weekend", B, R, "absolute", iso(local(B, 2026, 7, 18)), iso(local(B, 2026, 7, 20)), src="duckling")
add("assorted", "next week", B, R, "absolute", iso(local(B, 2026, 7, 20)), iso(local(B, 2026, 7, 27)), src="duckling")
add("assorted", "this morning", B, R, "absolute", iso(local(B, 2026, 7, 15, 6)), iso(local(B, 2026, 7, 15, 12)), src="chrono")
absT("assorted", "let's meet at 7:30pm to discuss", B, R, bd(2026, 7, 15), 19, 30, src="chrono")
absT("assorted", "The deadline is Friday at noon.", B, R, bd(2026, 7, 17), 12, src="chrono")
# Forms the parser does not resolve: by the accounting rule each is a
# question naming the word it could not read, or invalid; never a guess.
UNREAD = [("last day of February", "question", "last"),          # 'last day of'
          ("mid-March", "question", "mid"),                      # 'mid-'
          ("Thanksgiving", "invalid", "-")]                      # holidays (locale-dependent)
for (text, kind, ask) in UNREAD:
    add("unread", text, B, R, kind, ask=ask, src="chrono/duckling")
absT("time", "at 1530", B, R, nextT(B, R, 15, 30), 15, 30, src="issue32")  # a four-digit 24-hour time
# The nth weekday of a named month (issue 32): March 2027's first Monday, the next March.
first = dt.date(2027, 3, 1) + dt.timedelta(days=(0 - dt.date(2027, 3, 1).weekday()) % 7)
absDay("date", "the first Monday of March", B, R, first, "chrono/duckling")

# ---- not times ----
for text in ["hello there", "the sun is up", "I may go", "good morning", "2 a day", "10-20 people", "1/2 cup of flour",
             "Feb 30", "2026-13-01", "call Bob", "version 3.5 released", "room 101"]:
    add("invalid", text, "UTC", REFS[0], "invalid", src="kairos")

import gen_chat
gen_chat.generate(add)
gen_chat.chat_free(add)
gen_chat.issue_examples(add)
gen_chat.day_twice(add)
gen_chat.extra_forms(add)
gen_chat.more_forms(add)
gen_chat.night_and_this(add)
gen_chat.regions_and_holidays(add)
gen_chat.monthly(add)
gen_chat.twelve_hour(add)
gen_chat.said_on_the_day(add)
gen_chat.unread_day_words(add)
gen_chat.past_on_the_day(add)

import gen_typed
gen_typed.typed_forms(add)

import gen_issue32
gen_issue32.generate(add)

print("# corpus of the clockstate time parser: written by gen_corpus.py (see its header); one case a line.")
print("# category\tinput\ttz\tref\tkind\tstart\tend\task\tsource\tout_of_scope\trepeat")
for r in rows:
    print("\t".join(r))
