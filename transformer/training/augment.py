"""Names and numbers drawn anew: training pairs that teach the model to copy what it has never seen.

Tatoeba names Tom in about a quarter of its English sentences and almost nobody else, and its numbers are few,
so a model trained on it turns an unseen name into a stutter and changes numbers. Each epoch, a share of the
pairs gets other names (the same on both sides, of the same gender) and other numbers (where the target writes
the source's digits unchanged), and a small share of short introductions and numbers from templates is added.
Everything is drawn from one seed per epoch: the same on every rank and on resume.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

# The first names Tatoeba uses, their gender, and how each target language writes them
DATA_NAMES = {
    "Tom": ("m", {"de": ("Tom",), "fr": ("Tom",)}),
    "Mary": ("f", {"de": ("Maria", "Mary"), "fr": ("Marie", "Mary")}),
    "John": ("m", {"de": ("John", "Johannes"), "fr": ("John", "Jean")}),
    "Alice": ("f", {"de": ("Alice",), "fr": ("Alice",)}),
}
KEEP_TOM = 0.3  # of the pairs chosen for new names, this share keeps its names: the data stays natural


@dataclass
class Names:
    """First names by gender ("m", "f") and surnames, read from data/names.json (tools/names.py)."""

    first: dict[str, list[str]]
    surnames: list[str]

    @classmethod
    def load(cls, path: str | Path, side: str = "train") -> "Names":
        path = Path(path)
        if not path.is_absolute() and not path.exists():
            path = Path(__file__).resolve().parents[2] / path  # relative to the project
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(first=data[side], surnames=data["surnames"][side])


# -----------------------------------------------------------------------------
# Names: the same new name on both sides


def _word(name: str) -> str:
    return rf"(?<!\w){re.escape(name)}(?!\w)"


def _elide(text: str) -> str:
    """French elision before the names put in: "de Anna" -> "d'Anna", "d'Paul" -> "de Paul"."""
    text = re.sub(r"\b([DdJjLl]e|[Qq]ue) (?=[AEIOUYÉÈÂÎ])", lambda m: m.group(1)[:-1] + "'", text)
    return re.sub(r"\b([DdJjLl]|[Qq]u)'(?=[B-DF-HJ-NP-TV-XZ])", lambda m: m.group(1) + "e ", text)


def swap_names(src: str, tgt: str, lang: str, names: Names, rng: random.Random) -> tuple[str, str]:
    """(src, tgt) with each of Tatoeba's names replaced by one drawn name of its gender, on both sides.

    A name is replaced only where the target writes it as often as the source (else the pair is kept as it is):
    a German genitive keeps its s ("Toms" -> "Annas", "Lukas'"), French elision follows the new name."""
    found = [n for n in DATA_NAMES if re.search(_word(n), src)]
    if not found:
        return src, tgt
    plan = []
    for name in found:
        gender, spellings = DATA_NAMES[name]
        pattern = "|".join(re.escape(s) for s in spellings[lang])
        in_tgt = re.compile(rf"(?<!\w)({pattern})(s|')?(?!\w)")
        if len(in_tgt.findall(tgt)) != len(re.findall(_word(name), src)):
            return src, tgt
        plan.append((name, in_tgt, rng.choice(names.first[gender])))
    for name, in_tgt, new in plan:
        src = re.sub(_word(name), new, src)
        genitive = "'" if new[-1] in "sxzß" else "s"
        tgt = in_tgt.sub(lambda m, new=new: new + (genitive if m.group(2) else ""), tgt)
    return src, _elide(tgt) if lang == "fr" else tgt


# -----------------------------------------------------------------------------
# Numbers: other digits where the target copies the source's


NUMBER = re.compile(r"(?<![\d.,:])\d+(?:[:.]\d\d)?(?!\d|[.,:]\d)")  # 25, 1989, 10:45; not 2,000 or 3,5


DOUBLED = 0.3  # the share of drawn numbers that write a digit twice in a row ("1887", "4432", "112"): the fifth
# stage's models wrote every number they lost with such a digit once, and a uniform draw has few of them


def digits(n: int, rng: random.Random, first: str = "123456789") -> str:
    """A number of n digits, its first drawn from `first`; a share DOUBLED of them repeat a digit in a row."""
    out = [rng.choice(first)] + [rng.choice("0123456789") for _ in range(n - 1)]
    if n > 1 and rng.random() < DOUBLED:
        i = rng.randrange(n - 1)
        out[i + 1] = out[i]
    return "".join(out)


def year(rng: random.Random) -> str:
    """A year from 1800 to 2030, drawn as `digits` draws them (some with a digit twice in a row: "1887", "2011")."""
    while not 1800 <= int(drawn := digits(4, rng, "12")) <= 2030:
        pass
    return drawn


def _new_number(old: str, rng: random.Random) -> str:
    """A number like `old`: a time stays a time, a year a year, otherwise as many digits."""
    if re.fullmatch(r"\d{1,2}[:.]\d\d", old):
        hour = int(re.split(r"[:.]", old)[0])
        sep = old[-3]
        return f"{rng.randrange(1, 13 if hour <= 12 else 24)}{sep}{rng.randrange(0, 60):02d}"
    if len(old) == 4 and old[:2] in ("19", "20", "18"):
        return year(rng)
    if len(old) == 1:
        return str(rng.randrange(2, 10))
    return digits(len(old), rng)


def swap_numbers(src: str, tgt: str, rng: random.Random) -> tuple[str, str]:
    """(src, tgt) with every number the target writes unchanged replaced by another of its kind, on both sides."""
    numbers = NUMBER.findall(src)
    if not numbers or sorted(numbers) != sorted(NUMBER.findall(tgt)):
        return src, tgt
    for old in dict.fromkeys(numbers):
        new = _new_number(old, rng)
        pattern = re.compile(rf"(?<![\d.,:]){re.escape(old)}(?!\d|[.,:]\d)")
        src, tgt = pattern.sub(new, src), pattern.sub(new, tgt)
    return src, tgt


# -----------------------------------------------------------------------------
# Templates: introductions and numbers the data lacks ({name}, {surname}, {age}, {number}, {year}, {time})

TEMPLATES = {  # English, then German and French translations ("m" / "f": by the name's gender)
    "intro": [
        ("My name is {name}.", ["Ich heiße {name}.", "Mein Name ist {name}."], ["Je m'appelle {name}."]),
        ("I'm {name}.", ["Ich bin {name}."], ["Je suis {name}."]),
        ("Hi, I'm {name}.", ["Hallo, ich bin {name}."], ["Salut, je suis {name}."]),
        ("This is {name}.", ["Das ist {name}."], ["C'est {name}.", "Voici {name}."]),
        ("Her name is {name}.", ["Sie heißt {name}."], ["Elle s'appelle {name}."], "f"),
        ("His name is {name}.", ["Er heißt {name}."], ["Il s'appelle {name}."], "m"),
        ("{name} is my brother.", ["{name} ist mein Bruder."], ["{name} est mon frère."], "m"),
        ("{name} is my sister.", ["{name} ist meine Schwester."], ["{name} est ma sœur."], "f"),
        ("{name} is my best friend.", ["{name} ist mein bester Freund."], ["{name} est mon meilleur ami."], "m"),
        ("{name} is my best friend.", ["{name} ist meine beste Freundin."], ["{name} est ma meilleure amie."], "f"),
        ("I am {name} and I am {age} years old.", ["Ich bin {name} und ich bin {age} Jahre alt."],
         ["Je suis {name} et j'ai {age} ans."]),
        ("{name} is {age} years old.", ["{name} ist {age} Jahre alt."], ["{name} a {age} ans."]),
        ("Where is {name}?", ["Wo ist {name}?"], ["Où est {name} ?"]),
        ("Mr. {surname} is here.", ["Herr {surname} ist hier."], ["M. {surname} est ici."]),
        ("Mrs. {surname} is here.", ["Frau {surname} ist hier."], ["Mme {surname} est ici."]),
        ("Good morning, Mr. {surname}.", ["Guten Morgen, Herr {surname}."], ["Bonjour, monsieur {surname}."]),
        ("Good morning, Mrs. {surname}.", ["Guten Morgen, Frau {surname}."], ["Bonjour, madame {surname}."]),
    ],
    "numbers": [
        ("I was born in {year}.", ["Ich bin {year} geboren.", "Ich wurde {year} geboren."],
         ["Je suis né en {year}.", "Je suis née en {year}."]),
        ("The house was built in {year}.", ["Das Haus wurde {year} gebaut."], ["La maison a été construite en {year}."]),
        ("The meeting starts at {time}.", ["Die Besprechung beginnt um {time} Uhr."], ["La réunion commence à {time}."]),
        ("The film ends at {time}.", ["Der Film endet um {time} Uhr."], ["Le film finit à {time}."]),
        ("The book costs {number} euros.", ["Das Buch kostet {number} Euro."], ["Le livre coûte {number} euros."]),
        ("We need {number} chairs.", ["Wir brauchen {number} Stühle."], ["Il nous faut {number} chaises."]),
        ("Take line {number}.", ["Nimm die Linie {number}."], ["Prends la ligne {number}."]),
        ("My room number is {number}.", ["Meine Zimmernummer ist {number}."], ["Mon numéro de chambre est le {number}."]),
        ("Call me at {phone}.", ["Ruf mich unter {phone} an."], ["Appelle-moi au {phone}."]),
        ("Page {number}, please.", ["Seite {number}, bitte."], ["Page {number}, s'il vous plaît."]),
    ],
}
TEMPLATES["places"] = [
    ("I live in {city}.", ["Ich wohne in {city}.", "Ich lebe in {city}."], ["J'habite à {city}.", "Je vis à {city}."]),
    ("I'm from {city}.", ["Ich komme aus {city}."], ["Je viens de {city}."]),
    ("{name} lives in {city}.", ["{name} wohnt in {city}."], ["{name} habite à {city}."]),
    ("We went to {city} last summer.", ["Letzten Sommer waren wir in {city}."],
     ["L'été dernier, nous sommes allés à {city}."]),
    ("Have you ever been to {city}?", ["Warst du schon einmal in {city}?"], ["Es-tu déjà allé à {city} ?"]),
    ("My aunt lives in {city}.", ["Meine Tante wohnt in {city}."], ["Ma tante habite à {city}."]),
    ("The train to {city} leaves at {time}.", ["Der Zug nach {city} fährt um {time} Uhr ab."],
     ["Le train pour {city} part à {time}."]),
    ("Happy birthday, {name}!", ["Alles Gute zum Geburtstag, {name}!"], ["Joyeux anniversaire, {name} !"]),
    ("Hello, {name}!", ["Hallo, {name}!"], ["Bonjour, {name} !", "Salut, {name} !"]),
    ("Thank you, {name}.", ["Danke, {name}."], ["Merci, {name}."]),
    ("See you tomorrow, {name}!", ["Bis morgen, {name}!"], ["À demain, {name} !"]),
]
# Cities from many places: English, German, French (the same word where a language keeps the name)
CITIES = [(c, c, c) for c in (
    "Manchester", "Liverpool", "Leeds", "Glasgow", "Bristol", "Dublin", "Berlin", "Hamburg", "Frankfurt", "Zurich",
    "Madrid", "Barcelona", "Amsterdam", "Oslo", "Stockholm", "Helsinki", "Budapest", "Istanbul", "Cairo", "Lagos",
    "Nairobi", "Accra", "Dakar", "Casablanca", "Johannesburg", "Toronto", "Chicago", "Boston", "Seattle",
    "Dallas", "Sydney", "Melbourne", "Auckland", "Tokyo", "Osaka", "Kyoto", "Seoul", "Shanghai", "Delhi",
    "Mumbai", "Karachi", "Dhaka", "Jakarta", "Manila", "Bangkok", "Hanoi", "Lima", "Santiago", "Bogotá",
    "Caracas", "Montreal", "Dubai", "Riga", "Porto", "Lyon", "Toulouse", "Bordeaux", "Leipzig", "Dresden")] + [
    ("London", "London", "Londres"), ("Munich", "München", "Munich"), ("Cologne", "Köln", "Cologne"),
    ("Vienna", "Wien", "Vienne"), ("Rome", "Rom", "Rome"), ("Venice", "Venedig", "Venise"),
    ("Milan", "Mailand", "Milan"), ("Naples", "Neapel", "Naples"), ("Lisbon", "Lissabon", "Lisbonne"),
    ("Warsaw", "Warschau", "Varsovie"), ("Prague", "Prag", "Prague"), ("Moscow", "Moskau", "Moscou"),
    ("Athens", "Athen", "Athènes"), ("Brussels", "Brüssel", "Bruxelles"), ("Copenhagen", "Kopenhagen", "Copenhague"),
    ("Geneva", "Genf", "Genève"), ("Edinburgh", "Edinburgh", "Édimbourg"), ("Beijing", "Peking", "Pékin"),
    ("Mexico City", "Mexiko-Stadt", "Mexico"), ("New York", "New York", "New York"), ("Paris", "Paris", "Paris"),
    ("Marseille", "Marseille", "Marseille"), ("Nice", "Nizza", "Nice"), ("Florence", "Florenz", "Florence"),
]
TIME_FORMAT = {"de": "{h}:{m:02d}", "fr": "{h}h{m:02d}"}

# The clock as a class says it, and people's jobs and friends in the right gender: what the held-out classroom
# sentences got wrong ("half past seven" -> "halb sieben", "My mother is a doctor." -> "Meine Mutter ist Arzt.").
# None of these frames is a held-out sentence's (tests/test_augment.py), so those sentences stay a fair test.
TEMPLATES["clock and people"] = [
    ("It's {hour} o'clock.", ["Es ist {uhr} Uhr."], ["Il est {heures}."]),
    ("It's half past {hour}.", ["Es ist halb {next_hour}."], ["Il est {heures} et demie."]),
    ("It's a quarter past {hour}.", ["Es ist Viertel nach {hour}."], ["Il est {heures} et quart."]),
    ("It's a quarter to {hour}.", ["Es ist Viertel vor {hour}."], ["Il est {heures} moins le quart."]),
    ("The bus leaves at half past {hour}.", ["Der Bus fährt um halb {next_hour}."], ["Le bus part à {heures} et demie."]),
    ("We meet at a quarter past {hour}.", ["Wir treffen uns um Viertel nach {hour}."],
     ["On se retrouve à {heures} et quart.", "Nous nous retrouvons à {heures} et quart."]),
    ("The lesson ends at a quarter to {hour}.", ["Die Stunde endet um Viertel vor {hour}."],
     ["Le cours finit à {heures} moins le quart."]),
    ("I go to bed at {hour} o'clock.", ["Ich gehe um {uhr} Uhr ins Bett."], ["Je me couche à {heures}."]),
    ("See you at half past {hour}!", ["Bis halb {next_hour}!"], ["À {heures} et demie !"]),
    ("{name} is {a_job}.", ["{name} ist {job}."], ["{name} est {job}."]),
    ("{name} works as {a_job}.", ["{name} arbeitet als {job}."], ["{name} travaille comme {job}."]),
    ("{name} wants to be {a_job}.", ["{name} möchte {job} werden."], ["{name} veut devenir {job}."]),
    ("My aunt is {a_job}.", ["Meine Tante ist {job}."], ["Ma tante est {job}."], "f"),
    ("My uncle is {a_job}.", ["Mein Onkel ist {job}."], ["Mon oncle est {job}."], "m"),
    ("Her mother is {a_job}.", ["Ihre Mutter ist {job}."], ["Sa mère est {job}."], "f"),
    ("His father is {a_job}.", ["Sein Vater ist {job}."], ["Son père est {job}."], "m"),
    ("My sister wants to be {a_job}.", ["Meine Schwester möchte {job} werden."], ["Ma sœur veut devenir {job}."], "f"),
    ("My grandfather was {a_job}.", ["Mein Großvater war {job}.", "Mein Opa war {job}."],
     ["Mon grand-père était {job}."], "m"),
    ("{name} is my friend.", ["{name} ist mein Freund."], ["{name} est mon ami."], "m"),
    ("{name} is my friend.", ["{name} ist meine Freundin."], ["{name} est mon amie."], "f"),
    ("I'm going to the cinema with my friend {name}.", ["Ich gehe mit meinem Freund {name} ins Kino."],
     ["Je vais au cinéma avec mon ami {name}."], "m"),
    ("I'm going to the cinema with my friend {name}.", ["Ich gehe mit meiner Freundin {name} ins Kino."],
     ["Je vais au cinéma avec mon amie {name}."], "f"),
    ("{name} is the best player on the team.", ["{name} ist der beste Spieler der Mannschaft."],
     ["{name} est le meilleur joueur de l'équipe."], "m"),
    ("{name} is the best player on the team.", ["{name} ist die beste Spielerin der Mannschaft."],
     ["{name} est la meilleure joueuse de l'équipe."], "f"),
    ("{name} is a new student in our class.", ["{name} ist ein neuer Schüler in unserer Klasse."],
     ["{name} est un nouvel élève dans notre classe."], "m"),
    ("{name} is a new student in our class.", ["{name} ist eine neue Schülerin in unserer Klasse."],
     ["{name} est une nouvelle élève dans notre classe."], "f"),
]
HOURS = {"en": "one two three four five six seven eight nine ten eleven".split(),  # a clock's hours said, 1 to 11;
         "de": "eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf".split(),  # German's "halb" says the
         "fr": "une deux trois quatre cinq six sept huit neuf dix onze".split()}  # next one: up to 12
# (English with its article, German for a man and a woman, French for a man and a woman)
JOBS = [
    ("a doctor", ("Arzt", "Ärztin"), ("médecin", "médecin")),
    ("a teacher", ("Lehrer", "Lehrerin"), ("professeur", "professeure")),
    ("a nurse", ("Krankenpfleger", "Krankenpflegerin"), ("infirmier", "infirmière")),
    ("an engineer", ("Ingenieur", "Ingenieurin"), ("ingénieur", "ingénieure")),
    ("a cook", ("Koch", "Köchin"), ("cuisinier", "cuisinière")),
    ("a baker", ("Bäcker", "Bäckerin"), ("boulanger", "boulangère")),
    ("a farmer", ("Landwirt", "Landwirtin"), ("agriculteur", "agricultrice")),
    ("a police officer", ("Polizist", "Polizistin"), ("policier", "policière")),
    ("a pilot", ("Pilot", "Pilotin"), ("pilote", "pilote")),
    ("a dentist", ("Zahnarzt", "Zahnärztin"), ("dentiste", "dentiste")),
    ("a lawyer", ("Anwalt", "Anwältin"), ("avocat", "avocate")),
    ("a singer", ("Sänger", "Sängerin"), ("chanteur", "chanteuse")),
    ("a dancer", ("Tänzer", "Tänzerin"), ("danseur", "danseuse")),
    ("a painter", ("Maler", "Malerin"), ("peintre", "peintre")),
    ("a writer", ("Schriftsteller", "Schriftstellerin"), ("écrivain", "écrivaine")),
    ("a vet", ("Tierarzt", "Tierärztin"), ("vétérinaire", "vétérinaire")),
    ("a hairdresser", ("Friseur", "Friseurin"), ("coiffeur", "coiffeuse")),
    ("a journalist", ("Journalist", "Journalistin"), ("journaliste", "journaliste")),
    ("an architect", ("Architekt", "Architektin"), ("architecte", "architecte")),
    ("a programmer", ("Programmierer", "Programmiererin"), ("programmeur", "programmeuse")),
    ("an actor", ("Schauspieler", "Schauspielerin"), ("acteur", "actrice")),
    ("a mechanic", ("Mechaniker", "Mechanikerin"), ("mécanicien", "mécanicienne")),
    ("a gardener", ("Gärtner", "Gärtnerin"), ("jardinier", "jardinière")),
    ("a bus driver", ("Busfahrer", "Busfahrerin"), ("conducteur de bus", "conductrice de bus")),
    ("a shop assistant", ("Verkäufer", "Verkäuferin"), ("vendeur", "vendeuse")),
    ("a photographer", ("Fotograf", "Fotografin"), ("photographe", "photographe")),
    ("a scientist", ("Wissenschaftler", "Wissenschaftlerin"), ("scientifique", "scientifique")),
    ("a firefighter", ("Feuerwehrmann", "Feuerwehrfrau"), ("pompier", "pompière")),
    ("a football player", ("Fußballspieler", "Fußballspielerin"), ("footballeur", "footballeuse")),
]


# Months and seasons as a class says them: the shipped models copied a month after "is" as if it were a name
# ("My favorite month is December." -> "Mein Lieblingsjahr ist December.", "It's November." -> "C'est November.")
# and lost "in" before one ("In March it often rains." -> "Im March regnet es oft."). No frame is a held-out
# sentence's, nor shares most of its words with one (tests/test_augment.py).
TEMPLATES["calendar"] = [
    ("Her birthday is in {month}.", ["Ihr Geburtstag ist im {monat}.", "Sie hat im {monat} Geburtstag."],
     ["Son anniversaire est en {mois}."]),
    ("Is your birthday in {month}?", ["Hast du im {monat} Geburtstag?", "Ist dein Geburtstag im {monat}?"],
     ["Ton anniversaire est en {mois} ?", "Est-ce que ton anniversaire est en {mois} ?"]),
    ("I was born in {month}.", ["Ich bin im {monat} geboren."], ["Je suis né en {mois}.", "Je suis née en {mois}."]),
    ("It's {month}.", ["Es ist {monat}."], ["Nous sommes en {mois}.", "On est en {mois}."]),
    ("It is {month} now.", ["Jetzt ist {monat}."], ["Nous sommes en {mois} maintenant."]),
    ("In {month} it often rains.", ["Im {monat} regnet es oft."], ["En {mois}, il pleut souvent."]),
    ("It often snows in {month}.", ["Im {monat} schneit es oft.", "Es schneit oft im {monat}."],
     ["Il neige souvent en {mois}."]),
    ("In {month} we go to the sea.", ["Im {monat} fahren wir ans Meer."], ["En {mois}, nous allons à la mer."]),
    ("We have holidays in {month}.", ["Wir haben im {monat} Ferien.", "Im {monat} haben wir Ferien."],
     ["Nous avons des vacances en {mois}.", "On a des vacances en {mois}."]),
    ("The school year starts in {month}.", ["Das Schuljahr beginnt im {monat}."],
     ["L'année scolaire commence en {mois}."]),
    ("The concert is in {month}.", ["Das Konzert ist im {monat}."], ["Le concert est en {mois}."]),
    ("We'll meet again in {month}.", ["Wir sehen uns im {monat} wieder."],
     ["On se reverra en {mois}.", "Nous nous reverrons en {mois}."]),
    ("We are moving at the beginning of {month}.", ["Wir ziehen Anfang {monat} um."],
     ["Nous déménageons début {mois}."]),
    ("The trip is at the end of {month}.", ["Die Reise ist Ende {monat}."], ["Le voyage a lieu fin {mois}."]),
    ("It is the first of {month}.", ["Es ist der erste {monat}.", "Heute ist der erste {monat}."],
     ["C'est le premier {mois}.", "Nous sommes le premier {mois}."]),
    ("I love {month}.", ["Ich liebe den {monat}."], ["J'adore le mois {de_mois}."]),
    ("{month} comes after {month_before}.", ["Der {monat} kommt nach dem {monat_davor}."],
     ["{Mois} vient après {mois_avant}."]),
    ("We go skiing in {month}.", ["Im {monat} fahren wir Ski.", "Wir fahren im {monat} Ski."],
     ["Nous faisons du ski en {mois}.", "En {mois}, nous allons skier."]),
    ("What do you do in {season}?", ["Was machst du im {jahreszeit}?"], ["Qu'est-ce que tu fais {saison_en} ?"]),
    ("We go camping in {season}.", ["Im {jahreszeit} gehen wir zelten.", "Wir gehen im {jahreszeit} zelten."],
     ["Nous faisons du camping {saison_en}.", "On fait du camping {saison_en}."]),
    ("{season} is coming.", ["Der {jahreszeit} kommt."], ["{La_saison} arrive."]),
]
MONTHS = [("January", "Januar", "janvier"), ("February", "Februar", "février"), ("March", "März", "mars"),
          ("April", "April", "avril"), ("May", "Mai", "mai"), ("June", "Juni", "juin"), ("July", "Juli", "juillet"),
          ("August", "August", "août"), ("September", "September", "septembre"),
          ("October", "Oktober", "octobre"), ("November", "November", "novembre"),
          ("December", "Dezember", "décembre")]
# (English, German, French after "in", French as a subject); English says "autumn" and "fall" alike
SEASONS = [("spring", "Frühling", "au printemps", "le printemps"), ("summer", "Sommer", "en été", "l'été"),
           ("autumn", "Herbst", "en automne", "l'automne"), ("fall", "Herbst", "en automne", "l'automne"),
           ("winter", "Winter", "en hiver", "l'hiver")]


def calendar_slots(english: str, lang: str, rng: random.Random) -> tuple[dict, dict]:
    """The English and the target's slots of a month ({month}, and the one before it) and a season ({season}),
    drawn only where the English has them; a slot that starts the sentence is written with a capital."""
    source, target = {}, {}
    if "{month}" in english:
        m = rng.randrange(12)
        (en, de, fr), before = MONTHS[m], MONTHS[m - 1]
        source |= {"month": en, "month_before": before[0]}
        if lang == "de":
            target |= {"monat": de, "monat_davor": before[1]}
        else:
            target |= {"mois": fr, "Mois": fr.capitalize(), "mois_avant": before[2],
                       "de_mois": ("d'" if fr[0] in "ao" else "de ") + fr}
    if "{season}" in english:
        en, de, fr_in, fr_subject = rng.choice(SEASONS)
        source["season"] = en.capitalize() if english.startswith("{season}") else en
        if lang == "de":
            target["jahreszeit"] = de
        else:
            target |= {"saison_en": fr_in, "La_saison": fr_subject[0].upper() + fr_subject[1:]}
    return source, target


def said_slots(english: str, lang: str, gender: str, rng: random.Random) -> tuple[dict, dict]:
    """The English and the target's slots of a said hour ({hour}) and a job ({a_job}), drawn only where the English
    has them (other templates draw as they always did)."""
    source, target = {}, {}
    if "{hour}" in english:
        h = rng.randrange(1, 12)
        source["hour"] = HOURS["en"][h - 1]
        if lang == "de":
            target |= {"hour": HOURS["de"][h - 1], "next_hour": HOURS["de"][h], "uhr": "ein" if h == 1 else HOURS["de"][h - 1]}
        else:
            target["heures"] = HOURS["fr"][h - 1] + (" heure" if h == 1 else " heures")
    if "{a_job}" in english:
        job = rng.choice(JOBS)
        source["a_job"], target["job"] = job[0], job[1 if lang == "de" else 2][gender == "f"]
    return source, target


def template_pair(lang: str, names: Names, rng: random.Random) -> tuple[str, str]:
    """One (English, translation) pair from TEMPLATES with its slots drawn."""
    english, de, fr, *gender = rng.choice(rng.choice(list(TEMPLATES.values())))
    gender = gender[0] if gender else rng.choice("mf")
    h, m = rng.randrange(1, 24), rng.choice([0, 5, 10, 15, 20, 30, 45, rng.randrange(60)])
    slots = {"name": rng.choice(names.first[gender]), "surname": rng.choice(names.surnames),
             "age": str(rng.randrange(6, 90)), "number": digits(rng.randrange(2, 6), rng), "year": year(rng),
             "phone": " ".join(digits(rng.randrange(3, 5), rng, "0123456789") for _ in range(rng.randrange(2, 4)))}
    target = rng.choice(de if lang == "de" else fr)
    city = rng.choice(CITIES)
    said, said_target = said_slots(english, lang, gender, rng)
    dated, dated_target = calendar_slots(english, lang, rng)
    source = english.format(**slots, time=f"{h}:{m:02d}", city=city[0], **said, **dated)
    target = target.format(**slots, time=TIME_FORMAT[lang].format(h=h, m=m), city=city[1 if lang == "de" else 2],
                           **said_target, **dated_target)
    return source, _elide(target) if lang == "fr" else target


def copy_pair(names: Names, rng: random.Random) -> tuple[str, str]:
    """A pair whose target is its source: a name, a full name, a code or a number, to be copied as it is."""
    kind = rng.randrange(4)
    if kind == 0:
        text = rng.choice(names.first[rng.choice("mf")])
    elif kind == 1:
        text = f"{rng.choice(names.first[rng.choice('mf')])} {rng.choice(names.surnames)}"
    elif kind == 2:
        letters = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(rng.randrange(1, 4)))
        text = f"{letters}{rng.choice(['-', ' ', ''])}{digits(rng.randrange(2, 6), rng)}"
    else:
        text = digits(rng.randrange(1, 8), rng)
    return text, text


# -----------------------------------------------------------------------------
# One epoch's pairs


def augment(src: list[str], tgt: list[str], lang: str, names: Names, swap: float, templates: float,
            seed: int, copies: float = 0.0) -> tuple[list[str], list[str]]:
    """This epoch's pairs: a share `swap` of them with new names and numbers (KEEP_TOM of those keep their names),
    then len(src) * `templates` template pairs and len(src) * `copies` copy pairs appended."""
    rng = random.Random(seed)
    out_src, out_tgt = [], []
    for s, t in zip(src, tgt):
        if rng.random() < swap:
            if rng.random() >= KEEP_TOM:
                s, t = swap_names(s, t, lang, names, rng)
            s, t = swap_numbers(s, t, rng)
        out_src.append(s)
        out_tgt.append(t)
    for _ in range(int(len(src) * templates)):
        s, t = template_pair(lang, names, rng)
        out_src.append(s)
        out_tgt.append(t)
    for _ in range(int(len(src) * copies)):
        s, t = copy_pair(names, rng)
        out_src.append(s)
        out_tgt.append(t)
    return out_src, out_tgt
