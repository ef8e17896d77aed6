package clockstate

import "strings"

// places maps unambiguous city, region and single-timezone country names
// (lower case) to IANA zones, for §4.2 steps 1 ("Tokyo time") and 4 (a
// mentioned location). Names that are ambiguous (Portland, Springfield,
// Georgia), common English words (Nice, Reading, Mobile) or countries that
// span several zones (United States, Canada, Russia, Australia, Brazil,
// Mexico, Indonesia) are deliberately absent: they must be asked about.
var places = map[string]string{
	// North America
	"new york": "America/New_York", "nyc": "America/New_York", "manhattan": "America/New_York", "brooklyn": "America/New_York",
	"boston": "America/New_York", "philadelphia": "America/New_York", "washington dc": "America/New_York", "washington d.c.": "America/New_York",
	"miami": "America/New_York", "atlanta": "America/New_York", "detroit": "America/Detroit", "toronto": "America/Toronto",
	"montreal": "America/Toronto", "ottawa": "America/Toronto", "pittsburgh": "America/New_York", "orlando": "America/New_York", "baltimore": "America/New_York", "chicago": "America/Chicago", "houston": "America/Chicago",
	"dallas": "America/Chicago", "san antonio": "America/Chicago", "new orleans": "America/Chicago",
	"minneapolis": "America/Chicago", "st. louis": "America/Chicago", "nashville": "America/Chicago", "winnipeg": "America/Winnipeg",
	"mexico city": "America/Mexico_City", "guadalajara": "America/Mexico_City", "monterrey": "America/Monterrey",
	"denver": "America/Denver", "salt lake city": "America/Denver", "calgary": "America/Edmonton", "edmonton": "America/Edmonton",
	"phoenix": "America/Phoenix", "arizona": "America/Phoenix", "los angeles": "America/Los_Angeles", "san francisco": "America/Los_Angeles",
	"san diego": "America/Los_Angeles", "san jose": "America/Los_Angeles", "seattle": "America/Los_Angeles", "las vegas": "America/Los_Angeles",
	"silicon valley": "America/Los_Angeles", "vancouver": "America/Vancouver", "california": "America/Los_Angeles",
	"anchorage": "America/Anchorage", "alaska": "America/Anchorage", "honolulu": "Pacific/Honolulu", "hawaii": "Pacific/Honolulu",
	"halifax": "America/Halifax", "st. john's": "America/St_Johns", "newfoundland": "America/St_Johns", "havana": "America/Havana",
	"cuba": "America/Havana", "puerto rico": "America/Puerto_Rico", "jamaica": "America/Jamaica", "panama": "America/Panama",
	"costa rica": "America/Costa_Rica", "guatemala": "America/Guatemala",
	// South America
	"sao paulo": "America/Sao_Paulo", "são paulo": "America/Sao_Paulo", "rio de janeiro": "America/Sao_Paulo", "buenos aires": "America/Argentina/Buenos_Aires", "argentina": "America/Argentina/Buenos_Aires",
	"santiago de chile": "America/Santiago", "chile": "America/Santiago", "lima": "America/Lima", "peru": "America/Lima", "bogota": "America/Bogota", "bogotá": "America/Bogota",
	"colombia": "America/Bogota", "caracas": "America/Caracas", "venezuela": "America/Caracas", "montevideo": "America/Montevideo",
	"uruguay": "America/Montevideo", "quito": "America/Guayaquil", "la paz": "America/La_Paz", "asuncion": "America/Asuncion",
	// Europe
	"london": "Europe/London", "manchester": "Europe/London", "edinburgh": "Europe/London", "glasgow": "Europe/London",
	"birmingham uk": "Europe/London", "uk": "Europe/London", "united kingdom": "Europe/London", "england": "Europe/London",
	"scotland": "Europe/London", "wales": "Europe/London", "britain": "Europe/London", "great britain": "Europe/London",
	"dublin": "Europe/Dublin", "ireland": "Europe/Dublin", "lisbon": "Europe/Lisbon", "porto": "Europe/Lisbon",
	"madrid": "Europe/Madrid", "barcelona": "Europe/Madrid", "seville": "Europe/Madrid",
	"paris": "Europe/Paris", "france": "Europe/Paris", "lyon": "Europe/Paris", "marseille": "Europe/Paris",
	"berlin": "Europe/Berlin", "germany": "Europe/Berlin", "munich": "Europe/Berlin", "hamburg": "Europe/Berlin",
	"frankfurt": "Europe/Berlin", "cologne": "Europe/Berlin", "amsterdam": "Europe/Amsterdam", "netherlands": "Europe/Amsterdam",
	"rotterdam": "Europe/Amsterdam", "brussels": "Europe/Brussels", "belgium": "Europe/Brussels", "luxembourg": "Europe/Luxembourg",
	"zurich": "Europe/Zurich", "zürich": "Europe/Zurich", "geneva": "Europe/Zurich", "switzerland": "Europe/Zurich",
	"vienna": "Europe/Vienna", "austria": "Europe/Vienna", "rome": "Europe/Rome", "milan": "Europe/Rome", "italy": "Europe/Rome",
	"naples": "Europe/Rome", "venice": "Europe/Rome",
	"copenhagen": "Europe/Copenhagen", "denmark": "Europe/Copenhagen", "stockholm": "Europe/Stockholm", "sweden": "Europe/Stockholm",
	"oslo": "Europe/Oslo", "norway": "Europe/Oslo", "helsinki": "Europe/Helsinki", "finland": "Europe/Helsinki",
	"reykjavik": "Atlantic/Reykjavik", "iceland": "Atlantic/Reykjavik", "warsaw": "Europe/Warsaw", "poland": "Europe/Warsaw",
	"krakow": "Europe/Warsaw", "prague": "Europe/Prague", "czechia": "Europe/Prague", "czech republic": "Europe/Prague",
	"budapest": "Europe/Budapest", "hungary": "Europe/Budapest", "bratislava": "Europe/Bratislava", "ljubljana": "Europe/Ljubljana",
	"zagreb": "Europe/Zagreb", "croatia": "Europe/Zagreb", "belgrade": "Europe/Belgrade", "serbia": "Europe/Belgrade",
	"bucharest": "Europe/Bucharest", "romania": "Europe/Bucharest", "sofia": "Europe/Sofia", "bulgaria": "Europe/Sofia",
	"athens": "Europe/Athens", "greece": "Europe/Athens", "istanbul": "Europe/Istanbul", "ankara": "Europe/Istanbul",
	"kyiv": "Europe/Kyiv", "kiev": "Europe/Kyiv", "ukraine": "Europe/Kyiv", "minsk": "Europe/Minsk", "belarus": "Europe/Minsk",
	"vilnius": "Europe/Vilnius", "lithuania": "Europe/Vilnius", "riga": "Europe/Riga", "latvia": "Europe/Riga",
	"tallinn": "Europe/Tallinn", "estonia": "Europe/Tallinn", "moscow": "Europe/Moscow", "st. petersburg": "Europe/Moscow",
	"saint petersburg": "Europe/Moscow", "chisinau": "Europe/Chisinau", "malta": "Europe/Malta", "cyprus": "Asia/Nicosia",
	// Africa and the Middle East
	"cairo": "Africa/Cairo", "egypt": "Africa/Cairo", "lagos": "Africa/Lagos", "nigeria": "Africa/Lagos", "nairobi": "Africa/Nairobi",
	"kenya": "Africa/Nairobi", "johannesburg": "Africa/Johannesburg", "cape town": "Africa/Johannesburg", "south africa": "Africa/Johannesburg",
	"casablanca": "Africa/Casablanca", "morocco": "Africa/Casablanca", "accra": "Africa/Accra", "ghana": "Africa/Accra",
	"addis ababa": "Africa/Addis_Ababa", "ethiopia": "Africa/Addis_Ababa", "algiers": "Africa/Algiers", "tunis": "Africa/Tunis",
	"dar es salaam": "Africa/Dar_es_Salaam", "kampala": "Africa/Kampala", "kinshasa": "Africa/Kinshasa", "dakar": "Africa/Dakar",
	"tel aviv": "Asia/Jerusalem", "jerusalem": "Asia/Jerusalem", "israel": "Asia/Jerusalem", "beirut": "Asia/Beirut",
	"amman": "Asia/Amman", "riyadh": "Asia/Riyadh", "saudi arabia": "Asia/Riyadh", "jeddah": "Asia/Riyadh",
	"dubai": "Asia/Dubai", "abu dhabi": "Asia/Dubai", "uae": "Asia/Dubai", "doha": "Asia/Qatar", "qatar": "Asia/Qatar",
	"kuwait": "Asia/Kuwait", "bahrain": "Asia/Bahrain", "muscat": "Asia/Muscat", "oman": "Asia/Muscat", "tehran": "Asia/Tehran",
	"iran": "Asia/Tehran", "baghdad": "Asia/Baghdad", "iraq": "Asia/Baghdad",
	// Asia and the Pacific
	"karachi": "Asia/Karachi", "lahore": "Asia/Karachi", "islamabad": "Asia/Karachi", "pakistan": "Asia/Karachi",
	"kabul": "Asia/Kabul", "afghanistan": "Asia/Kabul", "tashkent": "Asia/Tashkent", "almaty": "Asia/Almaty",
	"delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata", "mumbai": "Asia/Kolkata", "bombay": "Asia/Kolkata", "bangalore": "Asia/Kolkata",
	"bengaluru": "Asia/Kolkata", "chennai": "Asia/Kolkata", "kolkata": "Asia/Kolkata", "calcutta": "Asia/Kolkata",
	"pune": "Asia/Kolkata", "india": "Asia/Kolkata", "colombo": "Asia/Colombo", "sri lanka": "Asia/Colombo",
	"kathmandu": "Asia/Kathmandu", "nepal": "Asia/Kathmandu", "dhaka": "Asia/Dhaka", "bangladesh": "Asia/Dhaka", "thimphu": "Asia/Thimphu",
	"yangon": "Asia/Yangon", "myanmar": "Asia/Yangon", "bangkok": "Asia/Bangkok", "thailand": "Asia/Bangkok", "phuket": "Asia/Bangkok",
	"hanoi": "Asia/Ho_Chi_Minh", "ho chi minh city": "Asia/Ho_Chi_Minh", "saigon": "Asia/Ho_Chi_Minh", "vietnam": "Asia/Ho_Chi_Minh",
	"phnom penh": "Asia/Phnom_Penh", "cambodia": "Asia/Phnom_Penh", "kuala lumpur": "Asia/Kuala_Lumpur", "malaysia": "Asia/Kuala_Lumpur",
	"singapore": "Asia/Singapore", "jakarta": "Asia/Jakarta", "bali": "Asia/Makassar", "manila": "Asia/Manila", "philippines": "Asia/Manila",
	"hong kong": "Asia/Hong_Kong", "macau": "Asia/Macau", "taipei": "Asia/Taipei", "taiwan": "Asia/Taipei",
	"beijing": "Asia/Shanghai", "shanghai": "Asia/Shanghai", "shenzhen": "Asia/Shanghai", "guangzhou": "Asia/Shanghai",
	"chengdu": "Asia/Shanghai", "china": "Asia/Shanghai", "seoul": "Asia/Seoul", "busan": "Asia/Seoul", "south korea": "Asia/Seoul",
	"korea": "Asia/Seoul", "pyongyang": "Asia/Pyongyang", "tokyo": "Asia/Tokyo", "osaka": "Asia/Tokyo", "kyoto": "Asia/Tokyo",
	"yokohama": "Asia/Tokyo", "sapporo": "Asia/Tokyo", "fukuoka": "Asia/Tokyo", "japan": "Asia/Tokyo", "ulaanbaatar": "Asia/Ulaanbaatar",
	"vladivostok": "Asia/Vladivostok", "novosibirsk": "Asia/Novosibirsk", "yekaterinburg": "Asia/Yekaterinburg",
	"sydney": "Australia/Sydney", "melbourne": "Australia/Melbourne", "canberra": "Australia/Sydney", "brisbane": "Australia/Brisbane",
	"queensland": "Australia/Brisbane", "adelaide": "Australia/Adelaide", "hobart": "Australia/Hobart", "tasmania": "Australia/Hobart", "lord howe island": "Australia/Lord_Howe", "lord howe": "Australia/Lord_Howe",
	"auckland": "Pacific/Auckland", "wellington": "Pacific/Auckland", "christchurch": "Pacific/Auckland", "new zealand": "Pacific/Auckland",
	"fiji": "Pacific/Fiji", "guam": "Pacific/Guam", "samoa": "Pacific/Apia", "tonga": "Pacific/Tongatapu", "chatham islands": "Pacific/Chatham",
}

// placeIndex is places keyed without dots ("st louis", "washington dc").
var placeIndex = func() map[string]string {
	m := make(map[string]string, len(places))
	for k, v := range places {
		m[strings.ReplaceAll(k, ".", "")] = v
	}
	return m
}()

// lookupPlace returns the zone of an exact (case-insensitive) place name
// of the alias table.
func lookupPlace(name string) (string, bool) {
	tz, ok := placeIndex[strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), ".", "")]
	return tz, ok
}

// lookupZonePlace is lookupPlace, then the city names of the zone
// database (zoneCities): for a place stated with a time ("3pm Tbilisi
// time", "1pm in Windhoek"), not for a place merely mentioned.
func lookupZonePlace(name string) (string, bool) {
	if tz, ok := lookupPlace(name); ok {
		return tz, ok
	}
	tz, ok := zoneCities[strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", " ")]
	return tz, ok
}

// maxPlaceWords is the longest place name in words.
const maxPlaceWords = 4
