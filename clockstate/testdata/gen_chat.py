"""The `chat` category of corpus.tsv: phrases written the way people type
them in a chat (British, American, Australian and Indian habits; lower
case; no trailing punctuation), in our own words. Each expected value is
computed here from the meaning we intend, with zoneinfo, never from the Go
parser. Imported by gen_corpus.py.

Meanings (doc/design.md "Time parser"): a time without a date is its next
occurrence; a weekday is the coming one (1 to 7 days ahead); a day of the
month alone is the next such day; d/m without a year is read by the zone
(day first in Europe, Australia, India; month first in the United States)
and is the next such date; "half nine" is 9:30; a part of day settles a
bare hour; a range of bare hours runs morning to afternoon when its start
is the larger ("from 10 till 4"), otherwise it is a question; "end of day"
is 17:00 to midnight, "end of the week" its Friday (the coming one at the weekend), "end of the month"
its last day, "end of the year" 31 December; durations of days and weeks
are calendar days in the zone, hours and minutes elapsed time.
"""
import datetime as dt
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc
WD = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MON = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
HW = ["twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def z(tz):
    return UTC if tz in ("", "UTC") else ZoneInfo(tz)


def iso(t):
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def local(tz, d, h=0, mi=0, s=0):
    """Wall time on date d in tz; fold=0 is RFC 5545's compatible rule."""
    d = d + dt.timedelta(days=h // 24)
    return dt.datetime(d.year, d.month, d.day, h % 24, mi, s, tzinfo=z(tz))


def today(tz, ref):
    return ref.astimezone(z(tz)).date()


def next_at(tz, ref, h, mi=0, s=0):
    d = today(tz, ref)
    t = local(tz, d, h, mi, s)
    if t < ref:
        t = local(tz, d + dt.timedelta(days=1), h, mi, s)
    return t


def coming(tz, ref, wd):
    d = today(tz, ref)
    return d + dt.timedelta(days=(wd - d.weekday()) % 7 or 7)


def on_day(tz, ref, wd, h, mi=0):
    """A bare weekday with a time (or a part of day starting at h): today
    when it names today and h:mi today is still ahead, else the coming one
    (doc/RATIONALE.md, "A weekday naming today")."""
    d = today(tz, ref)
    if d.weekday() == wd and local(tz, d, h, mi) > ref:
        return d
    return coming(tz, ref, wd)


def before_day(tz, ref, wd, n):
    """n days before a weekday: the coming one's, or a week later while
    that day is already past ("3 days before friday" said on a Wednesday)."""
    d = coming(tz, ref, wd) - dt.timedelta(days=n)
    while d < today(tz, ref):
        d += dt.timedelta(days=7)
    return d


def days_in(y, m):
    return ((dt.date(y + m // 12, m % 12 + 1, 1)) - dt.timedelta(days=1)).day


def next_dom(tz, ref, n):
    d = today(tz, ref)
    y, m = d.year, d.month
    if n < d.day:
        m += 1
    while True:
        y2, m2 = y + (m - 1) // 12, (m - 1) % 12 + 1
        if n <= days_in(y2, m2):
            return dt.date(y2, m2, n)
        m += 1


def next_dom_at(tz, ref, n, h, mi=0):
    """A day of the month alone with a time: the next time it comes, so a
    time already past today moves to the next month that has the day."""
    d = next_dom(tz, ref, n)
    while local(tz, d, h, mi) < ref:
        y, m = d.year + d.month // 12, d.month % 12 + 1
        while n > days_in(y, m):
            y, m = y + m // 12, m % 12 + 1
        d = dt.date(y, m, n)
    return d


def next_date(tz, ref, m, d):
    t = today(tz, ref)
    y = t.year
    while True:
        if d <= days_in(y, m) and dt.date(y, m, d) >= t:
            return dt.date(y, m, d)
        y += 1


def next_date_at(tz, ref, m, d, h, mi=0):
    """A date without a year with a time: the next time it comes, so an
    hour already past on the day itself is next year's."""
    day = next_date(tz, ref, m, d)
    while local(tz, day, h, mi) < ref:
        y = day.year + 1
        while d > days_in(y, m):
            y += 1
        day = dt.date(y, m, d)
    return day


def week_end(tz, ref):
    """"end of the week": this week's Friday, the coming one at the weekend."""
    t0 = today(tz, ref)
    return t0 + dt.timedelta(days=4 - t0.weekday() + (7 if t0.weekday() > 4 else 0))


def ordn(n):
    return "%d%s" % (n, "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th"))


def generate(add):
    def A(text, tz, ref, t, end=None, repeat=""):
        add("chat", text, tz, ref, "absolute", iso(t), iso(end) if end else "-", repeat=repeat)

    def D(text, tz, ref, d, days=1):
        add("chat", text, tz, ref, "absolute", iso(local(tz, d)), iso(local(tz, d + dt.timedelta(days=days))))

    def R(text, tz, ref, t, repeat=""):
        add("chat", text, tz, ref, "relative", iso(t), repeat=repeat)

    def Q(text, tz, ref, ask):
        add("chat", text, tz, ref, "question", ask=ask)

    def I(text, tz, ref):
        add("chat", text, tz, ref, "invalid")

    refs = [dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC),   # Wednesday
            dt.datetime(2026, 11, 28, 22, 30, tzinfo=UTC),  # Saturday night in Europe, Sunday in Asia
            dt.datetime(2027, 1, 4, 6, 15, tzinfo=UTC)]     # Monday morning in Europe
    uk, us, au, ind = "Europe/London", "America/New_York", "Australia/Sydney", "Asia/Kolkata"
    zones = [uk, us, "America/Chicago", "America/Los_Angeles", au, "Australia/Perth", ind]

    for ref in refs:
        for tz in zones:
            t0 = today(tz, ref)
            tom = t0 + dt.timedelta(days=1)
            # a day of the month alone
            for n, h in [(21, 16), (3, 9), (1, 10), (28, 14), (30, 18)]:
                d = next_dom_at(tz, ref, n, h)
                A("on the %s at %dpm" % (ordn(n), h - 12) if h > 12 else "on the %s at %dam" % (ordn(n), h), tz, ref, local(tz, d, h))
            D("the %s" % ordn(17), tz, ref, next_dom(tz, ref, 17))
            D("the 15th", tz, ref, next_dom(tz, ref, 15))
            nm = dt.date(t0.year + t0.month // 12, t0.month % 12 + 1, 3)
            D("next month on the 3rd", tz, ref, nm)
            A("next month on the 3rd at 9am", tz, ref, local(tz, nm, 9))
            A("at 15h30", tz, ref, next_at(tz, ref, 15, 30))
            R("1 hour and a half", tz, ref, ref + dt.timedelta(minutes=90))
            # parts of day settle a bare hour
            for wd, part, h, hh in [(3, "evening", 7, 19), (4, "night", 10, 22), (0, "morning", 8, 8), (6, "afternoon", 3, 15)]:
                A("%s %s at %d" % (WD[wd], part, h), tz, ref, local(tz, on_day(tz, ref, wd, hh), hh))
            A("at 6 in the evening", tz, ref, next_at(tz, ref, 18))
            A("four o'clock tomorrow afternoon", tz, ref, local(tz, tom, 16))
            A("seven o'clock tomorrow morning", tz, ref, local(tz, tom, 7))
            A("tomorrow night at 11", tz, ref, local(tz, tom, 23))
            # ranges
            s = on_day(tz, ref, 6, 10)
            A("from 10 till 4 on sunday", tz, ref, local(tz, s, 10), local(tz, s, 16))
            m = on_day(tz, ref, 0, 14)
            A("between 2 and 3:30 on monday afternoon", tz, ref, local(tz, m, 14), local(tz, m, 15, 30))
            sa = on_day(tz, ref, 5, 10)
            A("saturday 10-12", tz, ref, local(tz, sa, 10), local(tz, sa, 12))
            n = next_at(tz, ref, 12)
            A("noon to 3", tz, ref, n, local(tz, n.date(), 15))
            st = next_at(tz, ref, 8, 15, 30)
            A("08:15:30 - 17:45:00", tz, ref, st, local(tz, st.date(), 17, 45))
            Q("from 2 till 4", tz, ref, "morning or in the afternoon")
            # durations
            R("in an hour and a quarter", tz, ref, ref + dt.timedelta(minutes=75))
            R("90 mins", tz, ref, ref + dt.timedelta(minutes=90))
            R("in 1h30m", tz, ref, ref + dt.timedelta(minutes=90))
            r = ref.astimezone(z(tz))
            R("in two and a half days", tz, ref, (local(tz, r.date() + dt.timedelta(days=2), r.hour, r.minute)).astimezone(UTC) + dt.timedelta(hours=12))
            R("in a fortnight", tz, ref, local(tz, r.date() + dt.timedelta(days=14), r.hour, r.minute))
            # end of
            A("by end of day", tz, ref, local(tz, t0, 17), local(tz, tom))
            wd = t0.weekday()
            D("end of next week", tz, ref, t0 + dt.timedelta(days=4 - wd + 7))
            D("end of the week", tz, ref, week_end(tz, ref))
            D("end of the month", tz, ref, dt.date(t0.year, t0.month, days_in(t0.year, t0.month)))
            D("end of the year", tz, ref, dt.date(t0.year, 12, 31))
            # same time, after next, a week on
            A("same time next monday", tz, ref, local(tz, coming(tz, ref, 0), r.hour, r.minute))
            A("same time tomorrow", tz, ref, local(tz, tom, r.hour, r.minute))
            D("the thursday after next", tz, ref, coming(tz, ref, 3) + dt.timedelta(days=7))
            D("a week on tuesday", tz, ref, coming(tz, ref, 1) + dt.timedelta(days=7))
            D("a fortnight on friday", tz, ref, coming(tz, ref, 4) + dt.timedelta(days=14))
            D("a week tomorrow", tz, ref, tom + dt.timedelta(days=7))
            D("3 days before friday", tz, ref, before_day(tz, ref, 4, 3))
            A("17h30", tz, ref, next_at(tz, ref, 17, 30))
            D("june 2027", tz, ref, dt.date(2027, 6, 1), days=30)
            # recurrences: the first occurrence and the RRULE
            t = next_at(tz, ref, 8)
            while t.date().weekday() > 4:
                t = local(tz, t.date() + dt.timedelta(days=1), 8)
            A("every weekday at 8am", tz, ref, t, repeat="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
            A("every day at 7.30am", tz, ref, next_at(tz, ref, 7, 30), repeat="FREQ=DAILY")
            A("every other friday at 5pm", tz, ref, local(tz, coming(tz, ref, 4) if local(tz, t0, 17) < ref or t0.weekday() != 4 else t0, 17), repeat="FREQ=WEEKLY;INTERVAL=2;BYDAY=FR")
            R("every 2 hours", tz, ref, ref + dt.timedelta(hours=2), repeat="FREQ=HOURLY;INTERVAL=2")
            # impossible and unread
            I("the 31st of february", tz, ref)
            I("the 40th", tz, ref)
            Q("call mum in paris at 5pm", tz, ref, "paris")
            Q("at 5pm and again at 7pm", tz, ref, "7pm")
    chat_by_zone(A, D, R, Q, I, refs)


def chat_by_zone(A, D, R, Q, I, refs):
    """Phrases of one habit each, in its zone."""
    uk, us, au, ind = "Europe/London", "America/New_York", "Australia/Sydney", "Asia/Kolkata"
    for ref in refs:
        # British: half past in short, dotted times, day first
        tz = uk
        t0, tom = today(tz, ref), today(tz, ref) + dt.timedelta(days=1)
        for h in range(1, 12):
            A("half %s tomorrow morning" % HW[h], tz, ref, local(tz, tom, h, 30))
            A("half %s tomorrow evening" % HW[h], tz, ref, local(tz, tom, h + 12, 30)) if h >= 6 else None
            A("%d.45am tomorrow" % h, tz, ref, local(tz, tom, h, 45))
        A("half nine tonight", tz, ref, local(tz, t0, 21, 30))
        for (d, m, h) in [(14, 2, 20), (25, 12, 7), (5, 11, 19), (1, 4, 9), (31, 10, 18)]:
            hh = "%dpm" % (h - 12) if h > 12 else "%dam" % h
            A("%02d/%02d at %s" % (d, m, hh), tz, ref, local(tz, next_date_at(tz, ref, m, d, h), h))
        A("21.15 on friday", tz, ref, local(tz, on_day(tz, ref, 4, 21, 15), 21, 15))
        A("monday at 9am gmt", tz, ref, local("UTC", on_day(tz, ref, 0, 9), 9)) if ref.month in (1, 11) else None
        # American: month first, lower-case zones
        tz = us
        t0, tom = today(tz, ref), today(tz, ref) + dt.timedelta(days=1)
        for (m, d, h) in [(2, 14, 20), (12, 25, 9), (7, 4, 21), (3, 17, 18), (10, 31, 19)]:
            hh = "%dpm" % (h - 12) if h > 12 else "%dam" % h
            A("%d/%d at %s" % (m, d, hh), tz, ref, local(tz, next_date_at(tz, ref, m, d, h), h))
        for wd, ab in [(1, "tues"), (3, "thurs"), (5, "sat"), (6, "sun"), (4, "fri")]:
            A("%s at 3:30pm" % ab, tz, ref, local(tz, on_day(tz, ref, wd, 15, 30), 15, 30))
        if ref.month in (1, 11):
            A("9am est", tz, ref, next_at(tz, ref, 9))
            A("tomorrow at 4pm et", tz, ref, local(tz, tom, 16))
        else:
            A("9am edt", tz, ref, next_at(tz, ref, 9))
            Q("9am est", tz, ref, "EST")
        for h in range(1, 12):
            A("%d o'clock tomorrow afternoon" % h, tz, ref, local(tz, tom, h + 12)) if h <= 6 else None
            A("around %d tonight" % h, tz, ref, local(tz, t0, h + 12)) if h >= 6 else None
        # Australian: arvo, day first
        tz = au
        t0, tom = today(tz, ref), today(tz, ref) + dt.timedelta(days=1)
        for h in range(1, 6):
            A("tomorrow arvo at %d" % h, tz, ref, local(tz, tom, h + 12))
            A("half past %d tomorrow arvo" % h, tz, ref, local(tz, tom, h + 12, 30))
        A("tomorrow arvo", tz, ref, local(tz, tom, 12), local(tz, tom, 18))
        for (d, m) in [(26, 1), (25, 4), (3, 11)]:
            A("%d/%d at 6pm" % (d, m), tz, ref, local(tz, next_date_at(tz, ref, m, d, 18), 18))
        A("sat 10-12", tz, ref, local(tz, on_day(tz, ref, 5, 10), 10), local(tz, on_day(tz, ref, 5, 10), 12))
        # Indian: day first, IST, eod
        tz = ind
        t0, tom = today(tz, ref), today(tz, ref) + dt.timedelta(days=1)
        for (d, m, h) in [(15, 8, 9), (26, 1, 10), (2, 10, 11), (14, 11, 17)]:
            hh = "%d pm" % (h - 12) if h > 12 else "%d am" % h
            A("on %02d/%02d at %s" % (d, m, hh), tz, ref, local(tz, next_date_at(tz, ref, m, d, h), h))
        A("tomorrow 10:30 am ist", tz, ref, local(tz, tom, 10, 30))
        A("by eod", tz, ref, local(tz, t0, 17), local(tz, tom))
        A("do the needful by tomorrow 11am", tz, ref, local(tz, tom, 11))
        A("day after tomorrow at 6 in the evening", tz, ref, local(tz, t0 + dt.timedelta(days=2), 18))
        A("pls remind me at 5 pm sharp", tz, ref, next_at(tz, ref, 17))
        Q("on 2nd at 10", tz, ref, "10am or 10pm")


def chat_free(add):
    """Free phrases: each family with its own words, numbers and days
    drawn by a fixed seed, one zone of the habit and one reference each."""
    import random
    rnd = random.Random(21)
    refs = [dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC), dt.datetime(2026, 11, 28, 22, 30, tzinfo=UTC),
            dt.datetime(2027, 1, 4, 6, 15, tzinfo=UTC), dt.datetime(2026, 3, 27, 13, 45, tzinfo=UTC)]
    habits = {"uk": "Europe/London", "us": "America/New_York", "usw": "America/Los_Angeles", "au": "Australia/Sydney",
              "in": "Asia/Kolkata", "uscentral": "America/Chicago", "per": "Australia/Perth"}
    seen = set()

    def emit(kind, text, tz, ref, start="-", end="-", ask="-", repeat=""):
        if (text, tz) in seen:
            return
        seen.add((text, tz))
        add("chat", text, tz, ref, kind, start, end, ask, repeat=repeat)

    def hm12(h, mi, style):
        suf = "am" if h < 12 else "pm"
        h12 = h % 12 or 12
        if style == 0:
            return "%d%s" % (h12, suf) if mi == 0 else "%d:%02d%s" % (h12, mi, suf)
        if style == 1:
            return "%d %s" % (h12, suf) if mi == 0 else "%d:%02d %s" % (h12, mi, suf)
        if style == 2:
            return "%d.%02d%s" % (h12, mi, suf)
        return "%02d:%02d" % (h, mi)

    leads = ["", "remind me ", "ping me ", "can you remind me ", "pls remind me ", "remind me to call the bank ",
             "set a reminder for ", "nudge me ", "let's meet ", "book it for ", "move the call to "]
    tails = ["", " thanks", " pls", " cheers", " to water the plants", " about the invoice", " for the school run"]
    for i in range(420):
        key = rnd.choice(list(habits))
        tz = habits[key]
        ref = rnd.choice(refs)
        t0 = today(tz, ref)
        lead, tail = rnd.choice(leads), rnd.choice(tails)
        fam = i % 12
        h, mi = rnd.randint(6, 22), rnd.choice([0, 0, 15, 30, 45, 5, 20, 50])
        style = rnd.randint(0, 3)
        wd = rnd.randint(0, 6)
        if fam == 0:  # tomorrow at a time
            t = local(tz, t0 + dt.timedelta(days=1), h, mi)
            word = rnd.choice(["tomorrow", "tmrw", "tmr", "tomorrow"])
            emit("absolute", "%s%s at %s%s" % (lead, word, hm12(h, mi, style), tail), tz, ref, iso(t))
        elif fam == 1:  # a weekday at a time
            day = rnd.choice([WD[wd], "on " + WD[wd], "this coming " + WD[wd]])
            d = coming(tz, ref, wd) if day.startswith("this coming") else on_day(tz, ref, wd, h, mi)
            emit("absolute", "%s%s at %s%s" % (lead, day, hm12(h, mi, style), tail), tz, ref, iso(local(tz, d, h, mi)))
        elif fam == 2:  # minutes or hours from now
            n = rnd.randint(2, 95)
            unit, delta = rnd.choice([("mins", dt.timedelta(minutes=n)), ("minutes", dt.timedelta(minutes=n)),
                                      ("min", dt.timedelta(minutes=n)), ("hrs", dt.timedelta(hours=n % 12 + 1)),
                                      ("hours", dt.timedelta(hours=n % 12 + 1))])
            amount = n if unit.startswith("m") else n % 12 + 1
            form = rnd.choice(["in %d %s", "%d %s from now", "in about %d %s"])
            emit("relative", lead + (form % (amount, unit)) + tail, tz, ref, iso(ref + delta))
        elif fam == 3:  # a day of the month with a time
            n = rnd.randint(1, 28)
            d = next_dom_at(tz, ref, n, h, mi)
            emit("absolute", "%son the %s at %s%s" % (lead, ordn(n), hm12(h, mi, style), tail), tz, ref, iso(local(tz, d, h, mi)))
        elif fam == 4:  # a written date with a month
            m, n = rnd.randint(1, 12), rnd.randint(1, 28)
            d = next_date_at(tz, ref, m, n, h, mi)
            text = rnd.choice(["%s %d" % (MON[m - 1], n), "%s %s" % (MON[m - 1][:3], ordn(n)), "the %s of %s" % (ordn(n), MON[m - 1]),
                               "%d %s" % (n, MON[m - 1])])
            emit("absolute", "%s%s at %s%s" % (lead, text, hm12(h, mi, style), tail), tz, ref, iso(local(tz, d, h, mi)))
        elif fam == 5:  # a part of day that settles a bare hour
            part, lo_h = rnd.choice([("morning", 6), ("afternoon", 1), ("evening", 6), ("night", 7)])
            hb = rnd.randint(lo_h, 11 if part != "afternoon" else 5)
            hh = hb if part == "morning" else hb + 12
            when = rnd.choice(["tomorrow", WD[wd]])
            text = rnd.choice(["%s %s at %d" % (when, part, hb), "at %d %s %s" % (hb, when, part), "%s at %d in the %s" % (when, hb, part if part != "night" else "evening")])
            if "in the evening" in text and part == "night":
                hh = hb + 12
            d = t0 + dt.timedelta(days=1) if when == "tomorrow" else on_day(tz, ref, wd, hh)
            emit("absolute", lead + text + tail, tz, ref, iso(local(tz, d, hh)))
        elif fam == 6:  # a range on a day
            a = rnd.randint(8, 11)
            b = rnd.randint(1, 5)
            d = on_day(tz, ref, wd, a)
            text = rnd.choice(["%s from %d till %d" % (WD[wd], a, b), "%s %d-%d" % (WD[wd], a, b), "from %d to %d on %s" % (a, b, WD[wd])])
            emit("absolute", lead + text + tail, tz, ref, iso(local(tz, d, a)), iso(local(tz, d, b + 12)))
        elif fam == 7:  # next week's day, a week on
            d = coming(tz, ref, wd) + dt.timedelta(days=7)
            text = rnd.choice(["a week on %s" % WD[wd], "%s week" % WD[wd] if False else "a week from %s" % WD[wd]])
            emit("absolute", lead + text + " at " + hm12(h, mi, style) + tail, tz, ref, iso(local(tz, d, h, mi)))
        elif fam == 8:  # recurrences
            d = coming(tz, ref, wd)
            t = next_at(tz, ref, h, mi)
            while t.date().weekday() != wd:
                t = local(tz, t.date() + dt.timedelta(days=1), h, mi)
            text = rnd.choice(["every %s at %s", "%ss at %s", "each %s at %s"]) % (WD[wd], hm12(h, mi, style))
            emit("absolute", lead + text + tail, tz, ref, iso(t), repeat="FREQ=WEEKLY;BYDAY=" + ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][wd])
        elif fam == 9:  # a time alone, next occurrence
            emit("absolute", lead + "at " + hm12(h, mi, style) + tail, tz, ref, iso(next_at(tz, ref, h, mi)))
        elif fam == 10:  # tonight / this evening at a bare hour
            hb = rnd.randint(6, 11)
            text = rnd.choice(["tonight at %d", "at %d tonight", "this evening at %d", "%d tonight"]) % hb
            emit("absolute", lead + text + tail, tz, ref, iso(local(tz, t0, hb + 12)))
        else:  # questions: a bare hour with no part of day, a half-read phrase
            hb = rnd.randint(1, 11)
            q = rnd.choice([("%s at %d" % (WD[wd], hb), "%dam or %dpm" % (hb, hb)),
                            ("tomorrow at %d" % hb, "%dam or %dpm" % (hb, hb)),
                            ("at %s or %s" % (hm12(h, 0, 0), hm12(h % 12 + 10, 0, 0)), hm12(h % 12 + 10, 0, 0)),
                            ("%s in paris at %s" % (WD[wd], hm12(h, mi, 0)), "paris")])
            emit("question", lead + q[0] + tail, tz, ref, ask=q[1])


def issue_examples(add):
    """Every example of issue 21, as written there, in the zones it names."""
    ref = dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC)  # Wednesday
    winter = dt.datetime(2027, 1, 13, 10, 0, tzinfo=UTC)  # Wednesday

    def A(text, tz, ref, t, end=None, repeat=""):
        add("issue", text, tz, ref, "absolute", iso(t), iso(end) if end else "-", repeat=repeat, src="issue21")

    def D(text, tz, ref, d, days=1):
        add("issue", text, tz, ref, "absolute", iso(local(tz, d)), iso(local(tz, d + dt.timedelta(days=days))), src="issue21")

    for tz in ["Europe/London", "America/New_York", "Australia/Sydney", "Asia/Kolkata"]:
        for r in [ref, winter]:
            t0 = today(tz, r)
            tom = t0 + dt.timedelta(days=1)
            A("on the 21st at 4pm", tz, r, local(tz, next_dom_at(tz, r, 21, 16), 16))
            add("issue", "the 3rd at 9", tz, r, "question", ask="9am or 9pm", src="issue21")
            add("issue", "half nine", tz, r, "question", ask="9:30am or 9:30pm", src="issue21")
            A("9.45am", tz, r, next_at(tz, r, 9, 45))
            A("21.15", tz, r, next_at(tz, r, 21, 15))
            su, mo, sa = on_day(tz, r, 6, 10), on_day(tz, r, 0, 14), on_day(tz, r, 5, 10)
            A("from 10 till 4 on Sunday", tz, r, local(tz, su, 10), local(tz, su, 16))
            A("between 2 and 3:30 on Monday afternoon", tz, r, local(tz, mo, 14), local(tz, mo, 15, 30))
            A("Saturday 10-12", tz, r, local(tz, sa, 10), local(tz, sa, 12))
            n = next_at(tz, r, 12)
            A("noon to 3", tz, r, n, local(tz, n.date(), 15))
            A("Thursday evening at 7", tz, r, local(tz, on_day(tz, r, 3, 19), 19))
            A("at 6 in the evening", tz, r, next_at(tz, r, 18))
            A("four o'clock tomorrow afternoon", tz, r, local(tz, tom, 16))
            A("Friday night at 10", tz, r, local(tz, on_day(tz, r, 4, 22), 22))
            add("issue", "an hour and a quarter", tz, r, "relative", iso(r + dt.timedelta(minutes=75)), src="issue21")
            rl = r.astimezone(z(tz))
            add("issue", "two and a half days", tz, r, "relative",
                iso(local(tz, rl.date() + dt.timedelta(days=2), rl.hour, rl.minute).astimezone(UTC) + dt.timedelta(hours=12)), src="issue21")
            add("issue", "90 mins", tz, r, "relative", iso(r + dt.timedelta(minutes=90)), src="issue21")
            D("end of next week", tz, r, t0 + dt.timedelta(days=4 - t0.weekday() + 7))
            A("by end of day", tz, r, local(tz, t0, 17), local(tz, tom))
            D("end of the year", tz, r, dt.date(t0.year, 12, 31))
            A("same time next Monday", tz, r, local(tz, mo, rl.hour, rl.minute))
            D("the Thursday after next", tz, r, coming(tz, r, 3) + dt.timedelta(days=7))
            D("a week on Tuesday", tz, r, coming(tz, r, 1) + dt.timedelta(days=7))
            add("issue", "the 31st of February", tz, r, "invalid", src="issue21")
            add("issue", "the 40th", tz, r, "invalid", src="issue21")
            add("issue", "3 March 2027, 14:05 +0530", tz, r, "absolute", "2027-03-03T08:35:00Z", src="issue21")
            A("2027-03-03 | 14:05", tz, r, local(tz, dt.date(2027, 3, 3), 14, 5))
            st = next_at(tz, r, 8, 15, 30)
            A("08:15:30 - 17:45:00", tz, r, st, local(tz, st.date(), 17, 45))
            t = next_at(tz, r, 8)
            while t.date().weekday() > 4:
                t = local(tz, t.date() + dt.timedelta(days=1), 8)
            A("every weekday at 8am", tz, r, t, repeat="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
            add("issue", "in 1h30m", tz, r, "relative", iso(r + dt.timedelta(minutes=90)), src="issue21")
            add("issue", "a fortnight", tz, r, "relative", iso(local(tz, rl.date() + dt.timedelta(days=14), rl.hour, rl.minute)), src="issue21")
            A("17h30", tz, r, next_at(tz, r, 17, 30))
            D("3 days before friday", tz, r, before_day(tz, r, 4, 3))
            D("June 2027", tz, r, dt.date(2027, 6, 1), days=30)
    # day/month by the zone's habit; a question where the zone has none
    r = ref
    A("14/02 at 8pm", "Europe/London", r, local("Europe/London", dt.date(2027, 2, 14), 20))
    A("2/14 at 8pm", "America/New_York", r, local("America/New_York", dt.date(2027, 2, 14), 20))
    add("issue", "3/4 at 8pm", "UTC", r, "question", ask="April", src="issue21")
    add("issue", "3/4 at 8pm", "Asia/Tokyo", r, "question", ask="April", src="issue21")
    A("3/4 at 8pm", "Europe/London", r, local("Europe/London", dt.date(2027, 4, 3), 20))
    A("3/4 at 8pm", "America/New_York", r, local("America/New_York", dt.date(2027, 3, 4), 20))
    # lower-case abbreviations read as upper-case ones
    for text, tz, when, ok in [("9am est", "America/New_York", winter, True), ("9am EST", "America/New_York", winter, True),
                               ("9am est", "America/New_York", ref, False), ("4pm cet", "Europe/Berlin", winter, True),
                               ("4pm CET", "Europe/Berlin", winter, True), ("4pm cet", "Europe/Berlin", ref, False)]:
        if ok:
            h = 9 if text.startswith("9") else 16
            A(text, tz, when, next_at(tz, when, h))
        else:
            add("issue", text, tz, when, "floating", ask=text.split()[1].upper(), src="issue21")


def day_twice(add):
    """A day or time said twice, or a window with a time: the meaning
    when the two agree, a question when they do not (each of these was a
    confident answer that dropped half the phrase)."""
    for tz in ["Europe/London", "America/Chicago", "Australia/Perth", "Asia/Kolkata"]:
        for ref in [dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC), dt.datetime(2027, 2, 26, 19, 40, tzinfo=UTC)]:
            t0 = today(tz, ref)
            rl = ref.astimezone(z(tz))
            tom = t0 + dt.timedelta(days=1)

            def A(text, t, end=None):
                add("chat", text, tz, ref, "absolute", iso(t), iso(end) if end else "-")

            def Q(text, ask):
                add("chat", text, tz, ref, "question", ask=ask)
            A("this time tomorrow", local(tz, tom, rl.hour, rl.minute))
            A("same time next week", local(tz, t0 + dt.timedelta(days=7), rl.hour, rl.minute))
            fri = t0 + dt.timedelta(days=4 - t0.weekday() + 7)
            A("by end of next week at 3pm", local(tz, fri, 15))
            last = dt.date(t0.year, t0.month, days_in(t0.year, t0.month))
            A("end of the month at 9am", local(tz, last, 9))
            Q("next week at 5pm", "which day of the week")
            Q("this weekend at 10am", "which day of the weekend")
            Q("between monday and wednesday at 5pm", "which of those days")
            Q("in march at 5pm", "march")
            Q("see you in may at 6pm", "may")
            Q("tomorrow march 5", "5 march")
            Q("friday 14 march 2027", "sunday, not a friday")
            Q("monday, march 9, 2021", "tuesday, not a monday")
            A("sunday 14 march 2027 at 10am", local(tz, dt.date(2027, 3, 14), 10))
            d = next_dom(tz, ref, 17)
            wd = WD[d.weekday()]
            A("%s the 17th at 6pm" % wd, local(tz, d, 18))
            Q("%s the 17th at 6pm" % WD[(d.weekday() + 1) % 7], "not a " + WD[(d.weekday() + 1) % 7])


def extra_forms(add):
    """Spellings and amounts of chat: tonite, 2moro, twenty minutes, 12
    noon, weekday ranges in a repeat."""
    for tz in ["America/New_York", "Europe/London", "Australia/Sydney", "Asia/Kolkata"]:
        for ref in [dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC), dt.datetime(2027, 1, 9, 23, 0, tzinfo=UTC)]:
            t0 = today(tz, ref)
            tom = t0 + dt.timedelta(days=1)

            def A(text, t, repeat=""):
                add("chat", text, tz, ref, "absolute", iso(t), repeat=repeat)

            def R(text, delta):
                add("chat", text, tz, ref, "relative", iso(ref + delta))

            def first(h, days):
                t = next_at(tz, ref, h)
                while t.date().weekday() not in days:
                    t = local(tz, t.date() + dt.timedelta(days=1), h)
                return t
            A("every mon-fri at 9am", first(9, range(5)), "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
            A("every monday to friday at 9am", first(9, range(5)), "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
            A("every sat-sun at 10am", first(10, (5, 6)), "FREQ=WEEKLY;BYDAY=SA,SU")
            A("mondays and thursdays at 6pm", first(18, (0, 3)), "FREQ=WEEKLY;BYDAY=MO,TH")
            R("in twenty minutes", dt.timedelta(minutes=20))
            R("in forty-five mins", dt.timedelta(minutes=45))
            R("in twenty five minutes", dt.timedelta(minutes=25))
            R("give me 5 mins", dt.timedelta(minutes=5))
            add("chat", "every 15 mins", tz, ref, "relative", iso(ref + dt.timedelta(minutes=15)), repeat="FREQ=MINUTELY;INTERVAL=15")
            A("tonite at 8", local(tz, t0, 20))
            A("2nite at 9", local(tz, t0, 21))
            A("2moro at 10am", local(tz, tom, 10))
            A("day after tmrw at 9am", local(tz, t0 + dt.timedelta(days=2), 9))
            A("12 noon tomorrow", local(tz, tom, 12))
            A("lunch at 1", next_at(tz, ref, 13))
            A("8 in the morning", next_at(tz, ref, 8))
            A("at 7 in the morning tomorrow", local(tz, tom, 7))
            A("quarter to 9 tonight", local(tz, t0, 20, 45))
            A("half 7 tomorrow morning", local(tz, tom, 7, 30))
            A("the 1st of next month at 9am", local(tz, dt.date(t0.year + t0.month // 12, t0.month % 12 + 1, 1), 9))


def more_forms(add):
    """A part of day that moves a written 7:30, lower-case day
    abbreviations, Friday week, hour words after past/to, ranges with a
    day after them."""
    for tz in ["Europe/London", "America/Los_Angeles", "Australia/Sydney", "Asia/Kolkata"]:
        for ref in [dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC), dt.datetime(2026, 12, 3, 1, 30, tzinfo=UTC)]:
            t0 = today(tz, ref)
            tom = t0 + dt.timedelta(days=1)

            def A(text, t, end=None):
                add("chat", text, tz, ref, "absolute", iso(t), iso(end) if end else "-")

            def D(text, d, days=1):
                add("chat", text, tz, ref, "absolute", iso(local(tz, d)), iso(local(tz, d + dt.timedelta(days=days))))

            def Q(text, ask):
                add("chat", text, tz, ref, "question", ask=ask)
            A("7:30 this evening", local(tz, t0, 19, 30))
            A("7.30 this evening", local(tz, t0, 19, 30))
            A("tomorrow evening 7:30", local(tz, tom, 19, 30))
            A("tonight at 11:30", local(tz, t0, 23, 30))
            A("tomorrow afternoon at 2:15", local(tz, tom, 14, 15))
            D("next fri", coming(tz, ref, 4))
            D("this thu", t0 if t0.weekday() == 3 else coming(tz, ref, 3))  # "this" on the day itself: today
            wd = t0.weekday()
            sat = t0 + dt.timedelta(days=5 - wd)
            D("at the weekend", sat, days=2)
            D("friday week", coming(tz, ref, 4) + dt.timedelta(days=7))
            D("tuesday fortnight", coming(tz, ref, 1) + dt.timedelta(days=14))
            s = on_day(tz, ref, 5, 6)
            A("sat morning", local(tz, s, 6), local(tz, s, 12))
            Q("wed at half 3", "3:30am or 3:30pm")
            Q("half past four tmrw", "4:30am or 4:30pm")
            A("half past four tmrw afternoon", local(tz, tom, 16, 30))
            n = next_at(tz, ref, 17)
            A("5 to 6 in the evening", n, local(tz, n.date(), 18))
            A("ten to ten tonight", local(tz, t0, 21, 50))
            A("9 to 5 tomorrow", local(tz, tom, 9), local(tz, tom, 17))
            Q("the week after next", "after")


def night_and_this(add):
    """The small hours of tonight, "this <weekday>", midnight as 12
    tonight, two times at once, dashed dates, four-digit clocks."""
    for tz in ["Asia/Kolkata", "Europe/London", "America/Chicago", "Australia/Perth"]:
        for ref in [dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC), dt.datetime(2027, 3, 20, 4, 0, tzinfo=UTC)]:
            t0 = today(tz, ref)
            tom = t0 + dt.timedelta(days=1)

            def A(text, t):
                add("chat", text, tz, ref, "absolute", iso(t))

            def D(text, d):
                add("chat", text, tz, ref, "absolute", iso(local(tz, d)), iso(local(tz, d + dt.timedelta(days=1))))

            def this(wd):
                return t0 if t0.weekday() == wd else coming(tz, ref, wd)
            A("1 am tonight", local(tz, tom, 1))
            A("tonight at 2:30am", local(tz, tom, 2, 30))
            A("tonight at 12", local(tz, tom, 0))
            A("12 tonight", local(tz, tom, 0))
            A("tomorrow afternoon at 12", local(tz, tom, 12))
            A("this sunday 11 am", local(tz, this(6), 11))
            D("this monday", this(0))
            D("this saturday", this(5))
            add("chat", "15.08 at 10 am", tz, ref, "question", ask="two times")
            add("chat", "at 9am and 11am", tz, ref, "question", ask="and")
            A("1930 hrs", next_at(tz, ref, 19, 30))  # a four-digit 24-hour time (issue 32)
    for tz, want in [("Asia/Kolkata", dt.date(2027, 8, 15)), ("Europe/Berlin", dt.date(2027, 8, 15))]:
        ref = dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC)
        add("chat", "15-08-2027", tz, ref, "absolute", iso(local(tz, want)), iso(local(tz, want + dt.timedelta(days=1))))
        add("chat", "05-08-2027 at 9am", tz, ref, "absolute", iso(local(tz, dt.date(2027, 8, 5), 9)))
    ref = dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC)
    add("chat", "05-08-2027 at 9am", "America/Chicago", ref, "absolute", iso(local("America/Chicago", dt.date(2027, 5, 8), 9)))
    add("chat", "05-08-2027 at 9am", "UTC", ref, "question", ask="August")


def regions_and_holidays(add):
    """US region words after a time (read as ET/CT/MT/PT, or EST when
    "standard"), holidays (not parsed: a question, never a guess)."""
    jul, jan = dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC), dt.datetime(2027, 1, 13, 10, 0, tzinfo=UTC)
    for ref in [jul, jan]:
        ny, la, chi = "America/New_York", "America/Los_Angeles", "America/Chicago"
        add("chat", "noon eastern", ny, ref, "absolute", iso(next_at(ny, ref, 12)))
        add("chat", "3pm central", chi, ref, "absolute", iso(next_at(chi, ref, 15)))
        add("chat", "9 am pacific time", la, ref, "absolute", iso(next_at(la, ref, 9)))
        add("chat", "noon eastern", la, ref, "floating", ask="ET")
        if ref is jul:
            add("chat", "9am eastern standard time", ny, ref, "floating", ask="EST")
            add("chat", "9am eastern daylight time", ny, ref, "absolute", iso(next_at(ny, ref, 9)))
        else:
            add("chat", "9am eastern standard time", ny, ref, "absolute", iso(next_at(ny, ref, 9)))
        for tz in [ny, "Europe/London", "Asia/Kolkata"]:
            add("chat", "new year's eve at 11pm", tz, ref, "question", ask="year's")
            add("chat", "three days after christmas", tz, ref, "question", ask="christmas")
            add("chat", "christmas day at noon", tz, ref, "question", ask="christmas")
            add("chat", "in an hr", tz, ref, "relative", iso(ref + dt.timedelta(hours=1)))


def monthly(add):
    """A monthly repeat on a day of the month, first occurrence next."""
    for tz in ["Australia/Sydney", "Europe/London", "America/New_York"]:
        for ref in [dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC), dt.datetime(2026, 1, 31, 12, 0, tzinfo=UTC)]:
            d = next_dom_at(tz, ref, 15, 9)
            add("chat", "every month on the 15th at 9am", tz, ref, "absolute", iso(local(tz, d, 9)), repeat="FREQ=MONTHLY;BYMONTHDAY=15")
            d = next_dom(tz, ref, 1)
            add("chat", "monthly on the 1st", tz, ref, "absolute", iso(local(tz, d)), iso(local(tz, d + dt.timedelta(days=1))),
                repeat="FREQ=MONTHLY;BYMONTHDAY=1")
            d = next_dom_at(tz, ref, 30, 18)
            add("chat", "on the 30th at 6pm", tz, ref, "absolute", iso(local(tz, d, 18)))


def twelve_hour(add):
    """A written time without am/pm: the 24-hour clock where that is the
    habit, a question in the United States (12-hour clock), unless a part
    of day, a leading zero or a full date says which."""
    ref = dt.datetime(2026, 7, 15, 10, 0, tzinfo=UTC)
    for tz in ["America/New_York", "America/Los_Angeles"]:
        add("chat", "how about 4:15 on wed", tz, ref, "question", ask="4:15am or 4:15pm")
        add("chat", "tomorrow at 10:30", tz, ref, "question", ask="10:30am or 10:30pm")
        add("chat", "tomorrow at 07:30", tz, ref, "absolute", iso(local(tz, today(tz, ref) + dt.timedelta(days=1), 7, 30)))
        add("chat", "tomorrow at 4:15 in the afternoon", tz, ref, "absolute", iso(local(tz, today(tz, ref) + dt.timedelta(days=1), 16, 15)))
    for tz in ["Europe/London", "Asia/Kolkata", "Australia/Sydney"]:
        add("chat", "tomorrow at 10:30", tz, ref, "absolute", iso(local(tz, today(tz, ref) + dt.timedelta(days=1), 10, 30)))


def said_on_the_day(add):
    """A weekday said on that very day (today while the time is ahead, a
    week on once it is past; a whole day or "this coming" is next week's),
    a day counted back from a weekday (never in the past), "in 20" and "in
    a bit" (a question, never a silent invalid), "the 1st of the month"
    (the next 1st, not this month's past one)."""
    for tz in ["Europe/London", "America/New_York", "Australia/Sydney", "Asia/Kolkata"]:
        for y, m, d in [(2026, 11, 25), (2026, 11, 27)]:  # a Wednesday and a Friday
            ref = local(tz, dt.date(y, m, d), 10).astimezone(UTC)  # 10:00 there
            t0 = today(tz, ref)

            def A(text, t, end=None):
                add("chat", text, tz, ref, "absolute", iso(t), iso(end) if end else "-")

            def D(text, day):
                add("chat", text, tz, ref, "absolute", iso(local(tz, day)), iso(local(tz, day + dt.timedelta(days=1))))

            def Q(text, ask):
                add("chat", text, tz, ref, "question", ask=ask)

            wd = t0.weekday()
            name, short = WD[wd], WD[wd][:3]
            A("%s 14:00 to 15:30" % short, local(tz, t0, 14), local(tz, t0, 15, 30))
            A("%s at 5pm" % name, local(tz, t0, 17))
            A("remind me %s at 3pm to ring the plumber" % name, local(tz, t0, 15))
            A("%s evening at 7" % name, local(tz, t0, 19))
            A("%s at 9am" % name, local(tz, t0 + dt.timedelta(days=7), 9))
            A("this coming %s at 5pm" % name, local(tz, t0 + dt.timedelta(days=7), 17))
            D(name, t0 + dt.timedelta(days=7))
            for n in (2, 3):
                D("%d days before friday" % n, before_day(tz, ref, 4, n))
            nb = before_day(tz, ref, 4, 2)
            while local(tz, nb, 9) < ref:
                nb += dt.timedelta(days=7)
            A("2 days before friday at 9am", local(tz, nb, 9))
            A("3 days before friday at 5pm", local(tz, before_day(tz, ref, 4, 3), 17))
            Q("in 20", "in 20 minutes")
            Q("remind me in 45", "in 45 minutes")
            Q("back in 10 pls", "in 10 minutes")
            Q("in a bit", "in a bit")
            Q("ping me in a while", "in a while")
            Q("in a few", "in a few")
            D("the 1st of the month", next_dom(tz, ref, 1))
            D("on the 26th of the month", next_dom(tz, ref, 26))


def unread_day_words(add):
    """Words naming a time of day or a special day that no rule reads: a
    question naming them, never the plain day they stand next to."""
    ref = dt.datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
    for tz in ["Europe/London", "Australia/Sydney", "Asia/Kolkata"]:
        for text, ask in [("bank holiday monday", "holiday"), ("teatime tomorrow", "teatime"), ("bedtime tonight", "bedtime"),
                          ("remind me at dinnertime on friday", "dinnertime"), ("suppertime tmrw", "suppertime")]:
            add("chat", text, tz, ref, "question", ask=ask)


def past_on_the_day(add):
    """A date without a year whose hour is past on the day itself is next
    year's; "end of the week" said at the weekend is the coming Friday."""
    for tz in ["Europe/London", "America/New_York", "Australia/Sydney", "Asia/Kolkata"]:
        for ref in [local(tz, dt.date(2027, 2, 14), 21).astimezone(UTC), local(tz, dt.date(2026, 11, 29), 10).astimezone(UTC),
                    local(tz, dt.date(2026, 11, 28), 9).astimezone(UTC)]:
            t0 = today(tz, ref)
            fmt = "%d/%d at 8pm" % ((2, 14) if tz.startswith("America") else (14, 2))
            add("chat", fmt, tz, ref, "absolute", iso(local(tz, next_date_at(tz, ref, 2, 14, 20), 20)))
            add("chat", "feb 14th at 8pm", tz, ref, "absolute", iso(local(tz, next_date_at(tz, ref, 2, 14, 20), 20)))
            add("chat", "%s %d at 9am" % (MON[t0.month - 1], t0.day), tz, ref, "absolute", iso(local(tz, next_date_at(tz, ref, t0.month, t0.day, 9), 9)))
            fri = week_end(tz, ref)
            add("chat", "end of the week", tz, ref, "absolute", iso(local(tz, fri)), iso(local(tz, fri + dt.timedelta(days=1))))
            add("chat", "by the end of the week", tz, ref, "absolute", iso(local(tz, fri)), iso(local(tz, fri + dt.timedelta(days=1))))
