package connectors

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The providers faker expressions may call, registered by name. Methods
// whose words gofakeit has draw from it; the rest draw from the short
// lists below, which are Braid's own (names from the books, films and
// shows the providers are named after, and common astronomy), not Data
// Faker's word lists.

func init() {
	addFakerProvider("",
		fakerMethodSpec{names: []string{"regexify"}, usage: "'regex'", build: regexify},
		fakerMethodSpec{names: []string{"numerify"}, usage: "'text with #'", build: templateMethod(true, false)},
		fakerMethodSpec{names: []string{"letterify"}, usage: "'text with ?'[,'upper']", build: templateMethod(false, true)},
		fakerMethodSpec{names: []string{"bothify"}, usage: "'text with # and ?'[,'upper']", build: templateMethod(true, true)},
	)
	addFakerProvider("Number",
		fakerMethodSpec{names: []string{"numberBetween"}, usage: "'min','max'", build: numberBetween},
		fakerMethodSpec{names: []string{"randomDouble"}, usage: "'maxNumberOfDecimals','min','max'", build: randomDouble},
		fakerMethodSpec{names: []string{"digits"}, usage: "'count'", build: digits},
		fakerMethodSpec{names: []string{"randomNumber"}, usage: "['numberOfDigits','strict']", build: randomNumber},
		intIn(0, 9, "randomDigit", "digit"),
		intIn(1, 9, "randomDigitNotZero"),
		intIn(1, math.MaxInt32-1, "positive"),
		intIn(math.MinInt32, -1, "negative"),
	)
	addFakerProvider("Date",
		fakerMethodSpec{names: []string{"past"}, usage: "'atMost',['minimum',]'TimeUnit'[,'pattern']", build: datePast},
		fakerMethodSpec{names: []string{"future"}, usage: "'atMost',['minimum',]'TimeUnit'[,'pattern']", build: dateFuture},
		fakerMethodSpec{names: []string{"between"}, usage: "'yyyy-MM-dd[ HH:mm:ss]','yyyy-MM-dd[ HH:mm:ss]'", build: dateBetween},
		fakerMethodSpec{names: []string{"birthday"}, usage: "['minAge','maxAge']", build: dateBirthday},
	)
	addFakerProvider("Time",
		fakerMethodSpec{names: []string{"future"}, usage: "'atMost',['minimum',]'ChronoUnit'", build: timeOfDay(1)},
		fakerMethodSpec{names: []string{"past"}, usage: "'atMost',['minimum',]'ChronoUnit'", build: timeOfDay(-1)},
	)
	addFakerProvider("Options",
		fakerMethodSpec{names: []string{"option"}, usage: "'a','b',...", build: option},
	)
	addFakerProvider("Bool",
		text(func(c *fakerCtx) string { return strconv.FormatBool(c.rng.IntN(2) == 1) }, "bool"),
	)
	addFakerProvider("Name",
		text(func(c *fakerCtx) string { return c.f.FirstName() + " " + c.f.LastName() }, "fullName", "name"),
		text(func(c *fakerCtx) string {
			return c.f.FirstName() + " " + c.f.FirstName() + " " + c.f.LastName()
		}, "nameWithMiddle"),
		text(func(c *fakerCtx) string { return c.f.FirstName() }, "firstName"),
		text(func(c *fakerCtx) string { return c.f.LastName() }, "lastName"),
		text(func(c *fakerCtx) string {
			return strings.ToLower(c.f.FirstName() + "." + c.f.LastName())
		}, "username"),
		text(func(c *fakerCtx) string { return c.f.NamePrefix() }, "prefix"),
		text(func(c *fakerCtx) string { return c.f.NameSuffix() }, "suffix"),
		text(func(c *fakerCtx) string { return c.f.JobTitle() }, "title"),
	)
	addFakerProvider("Internet",
		text(func(c *fakerCtx) string { return c.f.UUID() }, "uuid"),
		text(func(c *fakerCtx) string { return c.f.Email() }, "emailAddress", "safeEmailAddress"),
		text(func(c *fakerCtx) string { return c.f.IPv4Address() }, "ipV4Address"),
		text(publicIPv4, "publicIpV4Address"),
		text(privateIPv4, "privateIpV4Address"),
		text(func(c *fakerCtx) string { return c.f.IPv6Address() }, "ipV6Address"),
		text(func(c *fakerCtx) string { return c.f.MacAddress() }, "macAddress"),
		text(func(c *fakerCtx) string { return c.f.URL() }, "url"),
		text(func(c *fakerCtx) string { return c.f.DomainName() }, "domainName"),
		text(func(c *fakerCtx) string { return c.f.DomainSuffix() }, "domainSuffix"),
		text(func(c *fakerCtx) string { return c.f.UserAgent() }, "userAgentAny", "userAgent"),
		text(func(c *fakerCtx) string { return c.f.HTTPMethod() }, "httpMethod"),
		text(func(c *fakerCtx) string { return c.f.Password(true, true, true, false, false, 8+c.rng.IntN(8)) }, "password"),
	)
	addFakerProvider("Address",
		text(func(c *fakerCtx) string { return c.f.City() }, "city", "cityName"),
		text(func(c *fakerCtx) string { return c.f.Country() }, "country"),
		text(func(c *fakerCtx) string { return c.f.CountryAbr() }, "countryCode"),
		text(func(c *fakerCtx) string { return c.f.State() }, "state"),
		text(func(c *fakerCtx) string { return c.f.StateAbr() }, "stateAbbr"),
		text(func(c *fakerCtx) string { return c.f.Street() }, "streetAddress"),
		text(func(c *fakerCtx) string { return c.f.StreetName() }, "streetName"),
		text(func(c *fakerCtx) string { return c.f.StreetNumber() }, "buildingNumber", "streetAddressNumber"),
		text(func(c *fakerCtx) string { return c.f.Zip() }, "zipCode", "postcode"),
		text(func(c *fakerCtx) string {
			return c.f.Street() + ", " + c.f.City() + ", " + c.f.StateAbr() + " " + c.f.Zip()
		}, "fullAddress"),
		text(func(c *fakerCtx) string { return strconv.FormatFloat(c.f.Latitude(), 'f', 8, 64) }, "latitude"),
		text(func(c *fakerCtx) string { return strconv.FormatFloat(c.f.Longitude(), 'f', 8, 64) }, "longitude"),
	)
	addFakerProvider("Commerce",
		text(func(c *fakerCtx) string { return c.f.ProductName() }, "productName"),
		fakerMethodSpec{names: []string{"price"}, usage: "['min','max']", build: commercePrice},
		text(func(c *fakerCtx) string { return c.f.ProductCategory() }, "department"),
		text(func(c *fakerCtx) string { return c.f.ProductMaterial() }, "material"),
		text(func(c *fakerCtx) string { return c.f.Color() }, "color"),
	)
	addFakerProvider("Company",
		text(func(c *fakerCtx) string { return c.f.Company() }, "name"),
		text(func(c *fakerCtx) string { return c.f.CompanySuffix() }, "suffix"),
		text(func(c *fakerCtx) string { return c.f.BuzzWord() }, "buzzword"),
		text(func(c *fakerCtx) string { return c.f.BS() }, "bs"),
		text(func(c *fakerCtx) string { return c.f.Slogan() }, "catchPhrase"),
		text(func(c *fakerCtx) string { return c.f.JobTitle() }, "profession"),
		text(func(c *fakerCtx) string { return "www." + strings.ToLower(c.f.LastName()) + "." + c.f.DomainSuffix() }, "url"),
	)
	addFakerProvider("Currency",
		text(func(c *fakerCtx) string { return c.f.CurrencyShort() }, "code"),
		text(func(c *fakerCtx) string { return c.f.CurrencyLong() }, "name"),
	)
	addFakerProvider("PhoneNumber",
		text(func(c *fakerCtx) string { return c.f.PhoneFormatted() }, "cellPhone", "phoneNumber"),
		text(func(c *fakerCtx) string { return c.f.Phone() }, "subscriberNumber"),
	)
	addFakerProvider("Lorem",
		text(func(c *fakerCtx) string { return c.f.LoremIpsumWord() }, "word"),
		fakerMethodSpec{names: []string{"sentence"}, usage: "['wordCount']", build: loremSentence},
		fakerMethodSpec{names: []string{"paragraph"}, usage: "['sentenceCount']", build: loremParagraph},
	)
	addFakerProvider("Superhero",
		text(superheroName, "name"),
		pick(superheroPrefixes, "prefix"),
		pick(superheroSuffixes, "suffix"),
		pick(superheroDescriptors, "descriptor"),
		pick(superheroPowers, "power"),
	)
	addFakerProvider("HarryPotter",
		pick(hpCharacters, "character", "characters"),
		pick(hpLocations, "location", "locations"),
		pick(hpSpells, "spell", "spells"),
		pick(hpHouses, "house", "houses"),
		pick(hpBooks, "book", "books"),
	)
	addFakerProvider("DrWho",
		pick(drWhoDoctors, "theDoctors", "the_doctors"),
		pick(drWhoCharacters, "character", "characters"),
	)
	addFakerProvider("RickAndMorty",
		pick(rmCharacters, "character", "characters"),
		pick(rmLocations, "location", "locations"),
	)
	addFakerProvider("HitchhikersGuideToTheGalaxy",
		pick(hhgCharacters, "character", "characters"),
		pick(hhgLocations, "location", "locations"),
		pick(hhgStarships, "starship", "starships"),
		pick(hhgPlanets, "planet", "planets"),
	)
	addFakerProvider("Space",
		pick(spaceStars, "star", "stars"),
		pick(spacePlanets, "planet", "planets"),
		pick(spaceMoons, "moon", "moons"),
		pick(spaceGalaxies, "galaxy", "galaxies"),
		pick(spaceConstellations, "constellation", "constellations"),
		pick(spaceCraft, "nasaSpaceCraft", "nasa_space_craft"),
		pick(spaceAgencies, "agency", "agencies"),
	)
}

// publicIPv4 is an IPv4 address outside the private, loopback and
// link-local ranges.
func publicIPv4(c *fakerCtx) string {
	for {
		a, b := 1+c.rng.IntN(223), c.rng.IntN(256)
		if a == 10 || a == 127 || (a == 169 && b == 254) || (a == 172 && b >= 16 && b < 32) || (a == 192 && b == 168) {
			continue
		}
		return fmt.Sprintf("%d.%d.%d.%d", a, b, c.rng.IntN(256), c.rng.IntN(256))
	}
}

// privateIPv4 is an address in 10/8, 172.16/12 or 192.168/16.
func privateIPv4(c *fakerCtx) string {
	switch c.rng.IntN(3) {
	case 0:
		return fmt.Sprintf("10.%d.%d.%d", c.rng.IntN(256), c.rng.IntN(256), c.rng.IntN(256))
	case 1:
		return fmt.Sprintf("172.%d.%d.%d", 16+c.rng.IntN(16), c.rng.IntN(256), c.rng.IntN(256))
	}
	return fmt.Sprintf("192.168.%d.%d", c.rng.IntN(256), c.rng.IntN(256))
}

// commercePrice is commerce.price ['min','max'] (default 0 and 100):
// uniform in [min, max), with two decimals.
func commercePrice(args []string) (fakerGen, error) {
	if err := wantArgs(args, 0, 2); err != nil {
		return nil, err
	}
	lo, hi := 0.0, 100.0
	if len(args) == 2 {
		var err1, err2 error
		lo, err1 = strconv.ParseFloat(args[0], 64)
		hi, err2 = strconv.ParseFloat(args[1], 64)
		if err1 != nil || err2 != nil || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return nil, fmt.Errorf("min and max must be finite numbers, got '%s' and '%s'", args[0], args[1])
		}
	}
	return func(c *fakerCtx) fakerOut {
		return fakerOut{s: strconv.FormatFloat(lo+(hi-lo)*c.rng.Float64(), 'f', 2, 64)}
	}, nil
}

func loremWords(c *fakerCtx, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = c.f.LoremIpsumWord()
	}
	s := strings.Join(w, " ")
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s + "."
}

func countArg(args []string, def int64, what string) (int64, error) {
	if len(args) == 0 {
		return def, nil
	}
	n, err := javaInt(args[0], what)
	if err == nil && (n < 0 || n > 10000) {
		err = fmt.Errorf("%s must be from 0 to 10000, got %d", what, n)
	}
	return n, err
}

// loremSentence is lorem.sentence ['wordCount'] (default 3): wordCount
// plus 0 to 5 more words, capitalized, ending with a period.
func loremSentence(args []string) (fakerGen, error) {
	if err := wantArgs(args, 0, 1); err != nil {
		return nil, err
	}
	n, err := countArg(args, 3, "wordCount")
	if err != nil {
		return nil, err
	}
	return func(c *fakerCtx) fakerOut { return fakerOut{s: loremWords(c, int(n)+c.rng.IntN(6))} }, nil
}

// loremParagraph is lorem.paragraph ['sentenceCount'] (default 3):
// sentenceCount plus 0 to 2 more sentences.
func loremParagraph(args []string) (fakerGen, error) {
	if err := wantArgs(args, 0, 1); err != nil {
		return nil, err
	}
	n, err := countArg(args, 3, "sentenceCount")
	if err != nil {
		return nil, err
	}
	return func(c *fakerCtx) fakerOut {
		k := int(n) + c.rng.IntN(3)
		s := make([]string, k)
		for i := range s {
			s[i] = loremWords(c, 3+c.rng.IntN(6))
		}
		return fakerOut{s: strings.Join(s, " ")}
	}, nil
}

// superheroName is a prefix, descriptor and suffix in one of four
// combinations.
func superheroName(c *fakerCtx) string {
	p := superheroPrefixes[c.rng.IntN(len(superheroPrefixes))]
	d := superheroDescriptors[c.rng.IntN(len(superheroDescriptors))]
	s := superheroSuffixes[c.rng.IntN(len(superheroSuffixes))]
	switch c.rng.IntN(4) {
	case 0:
		return p + " " + d + " " + s
	case 1:
		return p + " " + d
	case 2:
		return d + " " + s
	}
	return d
}

var (
	superheroPrefixes    = []string{"Captain", "Doctor", "Professor", "Mister", "Lady", "Agent", "General", "Iron", "Night", "Red"}
	superheroSuffixes    = []string{"Man", "Woman", "Girl", "Boy", "Knight", "Storm", "Shadow", "Spark", "Fist", "Eye"}
	superheroDescriptors = []string{"Thunder", "Silver", "Crimson", "Atomic", "Phantom", "Cosmic", "Quantum", "Steel", "Velvet", "Blaze", "Frost", "Echo"}
	superheroPowers      = []string{"Flight", "Super Strength", "Invisibility", "Telepathy", "Teleportation", "Healing", "Time Travel", "Shape Shifting", "Weather Control", "Super Speed"}

	hpCharacters = []string{"Harry Potter", "Hermione Granger", "Ron Weasley", "Albus Dumbledore", "Severus Snape", "Rubeus Hagrid", "Minerva McGonagall", "Draco Malfoy", "Luna Lovegood", "Neville Longbottom", "Sirius Black", "Ginny Weasley"}
	hpLocations  = []string{"Hogwarts", "Diagon Alley", "Hogsmeade", "The Burrow", "Azkaban", "Gringotts", "The Forbidden Forest", "Platform 9 3/4", "Godric's Hollow", "The Leaky Cauldron"}
	hpSpells     = []string{"Expelliarmus", "Lumos", "Nox", "Accio", "Alohomora", "Expecto Patronum", "Wingardium Leviosa", "Stupefy", "Protego", "Obliviate", "Riddikulus", "Reparo"}
	hpHouses     = []string{"Gryffindor", "Hufflepuff", "Ravenclaw", "Slytherin"}
	hpBooks      = []string{"Harry Potter and the Philosopher's Stone", "Harry Potter and the Chamber of Secrets", "Harry Potter and the Prisoner of Azkaban", "Harry Potter and the Goblet of Fire", "Harry Potter and the Order of the Phoenix", "Harry Potter and the Half-Blood Prince", "Harry Potter and the Deathly Hallows"}

	drWhoDoctors    = []string{"First Doctor", "Second Doctor", "Third Doctor", "Fourth Doctor", "Fifth Doctor", "Sixth Doctor", "Seventh Doctor", "Eighth Doctor", "War Doctor", "Ninth Doctor", "Tenth Doctor", "Eleventh Doctor", "Twelfth Doctor", "Thirteenth Doctor"}
	drWhoCharacters = []string{"The Doctor", "Rose Tyler", "Martha Jones", "Donna Noble", "Amy Pond", "Rory Williams", "Clara Oswald", "River Song", "The Master", "Davros", "Captain Jack Harkness", "Sarah Jane Smith"}

	rmCharacters = []string{"Rick Sanchez", "Morty Smith", "Summer Smith", "Beth Smith", "Jerry Smith", "Birdperson", "Squanchy", "Mr. Meeseeks", "Mr. Poopybutthole", "Evil Morty", "Unity", "Scary Terry"}
	rmLocations  = []string{"Earth (C-137)", "Citadel of Ricks", "Gazorpazorp", "Bird World", "Anatomy Park", "Interdimensional Cable", "Blips and Chitz", "Purge Planet", "Planet Squanch", "Froopyland"}

	hhgCharacters = []string{"Arthur Dent", "Ford Prefect", "Zaphod Beeblebrox", "Trillian", "Marvin", "Slartibartfast", "Deep Thought", "Eddie", "Fenchurch", "Prostetnic Vogon Jeltz"}
	hhgLocations  = []string{"Magrathea", "Milliways", "Earth", "Betelgeuse", "Vogsphere", "Damogran", "Frogstar World B", "Islington"}
	hhgStarships  = []string{"Heart of Gold", "Vogon Constructor Fleet", "Starship Titanic", "Bistromath", "Krikkit One", "Golgafrinchan Ark B"}
	hhgPlanets    = []string{"Earth", "Magrathea", "Vogsphere", "Krikkit", "Golgafrincham", "Damogran", "Brontitall", "Lamuella"}

	spaceStars          = []string{"Sirius", "Canopus", "Arcturus", "Vega", "Capella", "Rigel", "Procyon", "Betelgeuse", "Altair", "Aldebaran", "Antares", "Spica", "Pollux", "Deneb", "Polaris"}
	spacePlanets        = []string{"Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune"}
	spaceMoons          = []string{"Moon", "Phobos", "Deimos", "Io", "Europa", "Ganymede", "Callisto", "Titan", "Enceladus", "Triton", "Charon", "Miranda"}
	spaceGalaxies       = []string{"Milky Way", "Andromeda", "Triangulum", "Large Magellanic Cloud", "Small Magellanic Cloud", "Whirlpool", "Sombrero", "Pinwheel", "Cartwheel", "Black Eye"}
	spaceConstellations = []string{"Orion", "Ursa Major", "Ursa Minor", "Cassiopeia", "Cygnus", "Lyra", "Scorpius", "Leo", "Taurus", "Gemini", "Andromeda", "Pegasus"}
	spaceCraft          = []string{"Apollo", "Gemini", "Mercury", "Orion", "Space Shuttle Columbia", "Space Shuttle Challenger", "Space Shuttle Discovery", "Space Shuttle Atlantis", "Space Shuttle Endeavour", "Voyager", "Cassini"}
	spaceAgencies       = []string{"National Aeronautics and Space Administration", "European Space Agency", "Japan Aerospace Exploration Agency", "Indian Space Research Organisation", "China National Space Administration", "Canadian Space Agency", "Roscosmos"}
)
