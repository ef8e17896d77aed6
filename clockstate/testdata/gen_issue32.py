"""The `issue32` category of corpus.tsv: phrasing from the English test
files of Duckling (Duckling/Time/EN/Corpus.hs: reference Tuesday
2013-02-12 04:30 at UTC-2) and chrono (test/en/en_timezone_exp.test.ts)
not taken before, in our own rows. Each expected value is computed here
with zoneinfo from the meaning we intend (doc/design.md "Time parser"),
never from the Go parser: a time without a date is its next occurrence, a
bare hour without am/pm is asked, a part of day is its window, an
abbreviation of one zone is read as that zone while it is in use there.
Imported by gen_corpus.py.
"""
import datetime as dt
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc
NORONHA = "America/Noronha"  # UTC-2 all year since 2002: Duckling's -02:00
REF = dt.datetime(2013, 2, 12, 6, 30, tzinfo=UTC)  # 04:30 at -02:00, a Tuesday


def iso(t):
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def at(tz, y, mo, d, h=0, mi=0, s=0):
    return dt.datetime(y, mo, d, h, mi, s, tzinfo=ZoneInfo(tz))


def duckling(add):
    tz, R = NORONHA, REF

    def A(text, y, mo, d, h, mi=0, s=0):
        add("issue32", text, tz, R, "absolute", iso(at(tz, y, mo, d, h, mi, s)), src="duckling")

    def W(text, a, b):  # a window (start, end)
        add("issue32", text, tz, R, "absolute", iso(at(tz, *a)), iso(at(tz, *b)), src="duckling")

    def rel(text, **delta):
        add("issue32", text, tz, R, "relative", iso(R + dt.timedelta(**delta)), src="duckling")

    def ask(text, what):
        add("issue32", text, tz, R, "question", ask=what, src="duckling")

    for text in ["at 3am", "at 3 AM", "3 oclock am", "at three am"]:
        A(text, 2013, 2, 13, 3)
    A("3:18am", 2013, 2, 13, 3, 18)
    for text in ["@ 3pm", "3 o'clock in the afternoon", "3ish pm", "3pm approximately", "at about 3pm"]:
        A(text, 2013, 2, 12, 15)
    for text in ["at 15 past 3pm", "a quarter past 3pm", "3:15 in the afternoon"]:
        A(text, 2013, 2, 12, 15, 15)
    A("twenty after 3pm", 2013, 2, 12, 15, 20)
    A("half past 3 pm", 2013, 2, 12, 15, 30)
    A("330 p.m.", 2013, 2, 12, 15, 30)
    A("a quarter to noon", 2013, 2, 12, 11, 45)
    for text in ["8 tonight", "eight tonight", "8 this evening", "at 8 in the evening"]:
        A(text, 2013, 2, 12, 20)
    A("at 7:30 PM on Fri, Sep 20", 2013, 9, 20, 19, 30)
    A("at 9am on Saturday", 2013, 2, 16, 9)
    A("Fri, Jul 18, 2014 07:00 PM", 2014, 7, 18, 19)
    A("day after tomorrow 5pm", 2013, 2, 14, 17)
    A("day before yesterday 8am", 2013, 2, 10, 8)
    for text in ["today at 2pm", "at 2pm"]:
        A(text, 2013, 2, 12, 14)
    A("3pm tomorrow", 2013, 2, 13, 15)
    A("at 1:30pm", 2013, 2, 12, 13, 30)
    for text in ["at 12pm", "at noon"]:
        A(text, 2013, 2, 12, 12)
    for text in ["at 12am", "at midnight"]:
        A(text, 2013, 2, 13, 0)
    for text in ["tomorrow afternoon at 5", "at 5 tomorrow afternoon", "at 5pm tomorrow"]:
        A(text, 2013, 2, 13, 17)
    for text in ["at 1030", "around 1030"]:
        A(text, 2013, 2, 12, 10, 30)
    A("at 730 in the evening", 2013, 2, 12, 19, 30)
    A("10:30", 2013, 2, 12, 10, 30)
    for text in ["friday after next"]:
        W(text, (2013, 2, 22), (2013, 2, 23))
    for text in ["wednesday of next week", "wednesday next week"]:
        W(text, (2013, 2, 20), (2013, 2, 21))
    W("monday of this week", (2013, 2, 11), (2013, 2, 12))
    W("next monday", (2013, 2, 18), (2013, 2, 19))
    W("the 1st", (2013, 3, 1), (2013, 3, 2))
    # The nth weekday of a named month, a day.
    W("last Monday of March", (2013, 3, 25), (2013, 3, 26))
    W("last Sunday of March 2014", (2014, 3, 30), (2014, 3, 31))
    W("first tuesday of october", (2013, 10, 1), (2013, 10, 2))
    W("third tuesday of september 2014", (2014, 9, 16), (2014, 9, 17))
    W("second wednesday of october 2014", (2014, 10, 8), (2014, 10, 9))
    W("tomorrow lunch", (2013, 2, 13, 12), (2013, 2, 13, 14))
    W("tomorrow at lunch", (2013, 2, 13, 12), (2013, 2, 13, 14))
    W("yesterday evening", (2013, 2, 11, 18), (2013, 2, 11, 22))
    W("monday mOrnIng", (2013, 2, 18, 6), (2013, 2, 18, 12))
    for text in ["9:30 - 11:00 on Thursday", "Thursday from 9:30 to 11:00", "between 9:30 and 11:00 on thursday"]:
        W(text, (2013, 2, 14, 9, 30), (2013, 2, 14, 11))
    W("3-4pm", (2013, 2, 12, 15), (2013, 2, 12, 16))
    W("3:30 to 6 PM", (2013, 2, 12, 15, 30), (2013, 2, 12, 18))
    W("8am - 1pm", (2013, 2, 12, 8), (2013, 2, 12, 13))
    W("1pm-2pm tomorrow", (2013, 2, 13, 13), (2013, 2, 13, 14))
    W("after lunch", (2013, 2, 12, 14), (2013, 2, 12, 18))
    for text, delta in [("in a minute", dict(minutes=1)), ("in one minute", dict(minutes=1)), ("in three minutes", dict(minutes=3)),
                        ("in 60 minutes", dict(minutes=60)), ("in a quarter of an hour", dict(minutes=15)),
                        ("in three-quarters of an hour", dict(minutes=45)), ("in 2.5 hours", dict(minutes=150)),
                        ("in one hour", dict(hours=1)), ("in 1h", dict(hours=1)), ("in a couple hours", dict(hours=2)),
                        ("in 24 hours", dict(hours=24)), ("in 7 days", dict(days=7)), ("a week ago", dict(days=-7)),
                        ("three weeks ago", dict(days=-21)), ("14 days hence", dict(days=14)), ("a fortnight ago", dict(days=-14)),
                        ("in about half an hour", dict(minutes=30)), ("one second from now", dict(seconds=1)),
                        ("a day from now", dict(days=1))]:
        rel(text, **delta)
    ask("in 15", "15 minutes")
    ask("3 oclock", "3am or 3pm")
    ask("half three", "3:30am or 3:30pm")
    ask("Thu at 8 GMT", "8am or 8pm")
    ask("Thursday 8:00 PST", "PST")
    ask("in a few days", "in 3 days")
    ask("next few days", "days")
    # A zone of the abbreviation: CET in February, GMT.
    add("issue32", "4pm CET", tz, R, "absolute", iso(at("Europe/Berlin", 2013, 2, 12, 16)), src="duckling")
    add("issue32", "Thursday 8:00 GMT", tz, R, "absolute", iso(dt.datetime(2013, 2, 14, 8, tzinfo=UTC)), src="duckling")


def chrono(add):
    ref = dt.datetime(2020, 9, 1, 12, tzinfo=UTC)
    for tz in ["UTC", "Europe/London", "Asia/Tokyo"]:
        def A(text, t):
            add("issue32", text, tz, ref, "absolute", iso(t), src="chrono")
        off = lambda h, m: dt.timezone(dt.timedelta(hours=h, minutes=m))
        A("wednesday, september 16, 2020 at 11 am utc+02:45", dt.datetime(2020, 9, 16, 11, tzinfo=off(2, 45)))
        A("wednesday, september 16, 2020 at 11 am utc+0245", dt.datetime(2020, 9, 16, 11, tzinfo=off(2, 45)))
        A("wednesday, september 16, 2020 at 11 am utc+02", dt.datetime(2020, 9, 16, 11, tzinfo=off(2, 0)))
        A("wednesday, september 16, 2020 at 11 am GMT -08:45", dt.datetime(2020, 9, 16, 11, tzinfo=off(-8, -45)))
        A("wednesday, september 16, 2020 at 11 am JST", at("Asia/Tokyo", 2020, 9, 16, 11))
        # An unknown word after the time is asked about, never skipped.
        add("issue32", "Jan 1st 2023 at 10:00 XYZ", tz, ref, "question", ask="XYZ", src="chrono")
        add("issue32", "in 1 hour get eggs and milk", tz, ref, "relative", iso(ref + dt.timedelta(hours=1)), src="chrono")
        add("issue32", "2 hour later", tz, ref, "relative", iso(ref + dt.timedelta(hours=2)), src="chrono")
    # CET of the user's own zone (Berlin), either side of the switch to summer time.
    ref = dt.datetime(2022, 3, 1, 12, tzinfo=UTC)
    add("issue32", "2022-03-26 23:00 CET", "Europe/Berlin", ref, "absolute", iso(at("Europe/Berlin", 2022, 3, 26, 23)), src="chrono")
    # The day after the switch the user's own zone (Berlin) reads it: Berlin time, as chrono's +02:00.
    add("issue32", "2022-03-27 23:00 CET", "Europe/Berlin", ref, "absolute", iso(at("Europe/Berlin", 2022, 3, 27, 23)), src="chrono")
    add("issue32", "2022-03-12 23:00 ET", "America/New_York", ref, "absolute", iso(at("America/New_York", 2022, 3, 12, 23)), src="chrono")
    add("issue32", "2022-03-13 23:00 ET", "America/New_York", ref, "absolute", iso(at("America/New_York", 2022, 3, 13, 23)), src="chrono")


def dateparser(add):
    """dateparser's tests/test_parts_of_day.py: Monday 2026-09-28 15:00."""
    ref = dt.datetime(2026, 9, 28, 14, 0, tzinfo=UTC)  # 15:00 in Lisbon (WEST)
    tz = "Europe/Lisbon"

    def A(text, *t):
        add("issue32", text, tz, ref, "absolute", iso(at(tz, *t)), src="dateparser")

    def W(text, a, b):
        add("issue32", text, tz, ref, "absolute", iso(at(tz, *a)), iso(at(tz, *b)), src="dateparser")
    W("tonight", (2026, 9, 28, 18), (2026, 9, 29, 0))
    W("last night", (2026, 9, 27, 18), (2026, 9, 28, 0))
    W("this morning", (2026, 9, 28, 6), (2026, 9, 28, 12))
    W("tomorrow in the afternoon", (2026, 9, 29, 12), (2026, 9, 29, 18))
    W("monday evening", (2026, 9, 28, 18), (2026, 9, 28, 22))  # a weekday naming today, its part still ahead
    A("tonight at 11pm", 2026, 9, 28, 23)
    A("8 in the evening", 2026, 9, 28, 20)
    A("tomorrow at 7:30 in the morning", 2026, 9, 29, 7, 30)
    A("12 at night", 2026, 9, 29, 0)  # midnight ahead
    A("2 at night", 2026, 9, 29, 2)  # the small hours ahead
    W("January 8 in the evening", (2027, 1, 8, 18), (2027, 1, 8, 22))
    A("January 8 at 9 in the evening", 2027, 1, 8, 21)
    W("2026-01-05 at night", (2026, 1, 5, 18), (2026, 1, 6, 0))
    W("Sunday, January 4, 2026 at night", (2026, 1, 4, 18), (2026, 1, 5, 0))


def generate(add):
    duckling(add)
    chrono(add)
    dateparser(add)
