"""The conversational set: long chats between two people over many sessions, where a fact is said
once and asked about later in other words.

Each conversation is a pair of friends who talk in sessions spread over about a year and a half.
A session is written as a Claude Code transcript: one person's lines are the user turns, the
other's the assistant turns, each line starting with the speaker's name. Most of every session
is small talk drawn from a shared pool (work, food, weather, family, shows, weekends, pets), so
the words of a fact (a dog, a wedding, a trip, a month, a restaurant) also turn up in sessions
that are not about it. A fact is placed in exactly one session (bench.py checks that its words
appear there), and the question about it avoids the fact's own content words where a person
asking would avoid them.

Question kinds
--------------
chat_fact    a fact said once, asked in other words                   relevant: that session
chat_multi   needs two sessions (a plan and what became of it)        relevant: both
chat_time    asks when something happened or what happened when       relevant: that session
chat_update  a plan changed later; asks for the current state         relevant: the newer session

Everything is generated from a seed per conversation: two runs write the same words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from specs._base import A, Spec, U

CHAT_KINDS = ("chat_fact", "chat_multi", "chat_time", "chat_update")
SESSIONS_PER_CHAT = 30
DAYS_SPANNED = 520


@dataclass(frozen=True)
class ChatQuery:
    kind: str
    text: str
    relevant: tuple[str, ...]  # session keys
    project: str  # the conversation's folder name (bench.py asks within the ingested session's project)
    needles: tuple[tuple[str, str], ...] = ()  # (session key, a string that must be in its transcript)


@dataclass
class Person:
    name: str
    city: str
    job: str
    partner: str
    sibling: str
    mother_word: str = "mum"


@dataclass
class Conversation:
    key: str
    a: Person
    b: Person


CONVERSATIONS = [
    Conversation("maya-tom", Person("Maya", "Leeds", "nurse", "Sam", "Hannah"),
                 Person("Tom", "Bristol", "civil engineer", "Priya", "Oliver")),
    Conversation("lucia-ben", Person("Lucía", "Valencia", "translator", "Marc", "Inés", "mamá"),
                 Person("Ben", "Manchester", "teacher", "Chloe", "Jack")),
    Conversation("priya-jonas", Person("Priya", "Hamburg", "data analyst", "Felix", "Anjali"),
                 Person("Jonas", "Leipzig", "carpenter", "Mia", "Lena")),
    Conversation("kofi-aiko", Person("Kofi", "Glasgow", "paramedic", "Esi", "Ama"),
                 Person("Aiko", "Dublin", "architect", "Ruairí", "Yuki")),
]

# -- small talk ------------------------------------------------------------------------------------

FOODS = ["lasagne", "a Thai green curry", "dal with rice", "fish tacos", "a mushroom risotto", "shakshuka",
         "ramen from the place by the station", "leftover pizza", "a roast chicken", "bean chilli", "pierogi",
         "a big salad", "pancakes", "paella", "a lamb tagine", "gnocchi"]
SHOWS = ["that Danish crime series", "the baking show", "a documentary about octopuses", "the new Dune film",
         "a Korean drama", "the football", "an old Columbo episode", "the cycling highlights", "a nature programme",
         "that podcast about the Titanic", "the snooker final", "a stand-up special"]
WEATHERS = ["raining sideways", "finally sunny", "grey and cold", "weirdly warm for the time of year", "foggy all day",
            "windy enough to knock the bins over", "freezing, the car was iced over", "muggy"]
PLACES = ["the coast", "Edinburgh", "Lisbon", "the Lake District", "Berlin", "a cottage in Wales", "Porto",
          "Amsterdam", "Cornwall", "the Alps", "Copenhagen", "Seville", "Krakow", "Galway", "the Peak District"]
CHORES = ["sorting the garage", "repainting the hallway", "fixing the leaky tap", "the big supermarket shop",
          "cleaning the oven", "putting up shelves", "clearing the gutters", "ironing a mountain of shirts",
          "assembling a wardrobe", "defrosting the freezer"]
COLLEAGUES = ["Dave", "Nadia", "Greg", "Fatima", "Rob", "Helen", "Tariq", "Sophie", "Marek", "Joy"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

SMALL_TALK = [
    "How's your week going?",
    "Long day. {colleague} called in sick again so I covered for them.",
    "We had {food} tonight, it was actually pretty good.",
    "It's {weather} here today.",
    "Did you end up watching {show}?",
    "Yeah, we watched two episodes of {show} and fell asleep on the sofa.",
    "I spent most of {day} {chore}.",
    "Work is fine, just busy. There's a deadline at the end of the month.",
    "Ha, same here. My manager keeps adding things to the list.",
    "Are you still thinking about going to {place} at some point?",
    "Maybe one day. It's expensive though.",
    "The neighbour's dog was barking half the night again.",
    "We walked along the river on {day}, it was lovely until it started to rain.",
    "{colleague} brought cake into work for no reason, best day of the week.",
    "I need a holiday. Even a long weekend would do.",
    "My back is killing me after {chore}.",
    "Did I tell you {colleague} is leaving? Their leaving do is next {day}.",
    "The trains were a mess again, I got home at nine.",
    "I tried making {food} from scratch, it took forever.",
    "We should catch up properly soon, a call rather than texting.",
    "Sorry, slow reply, my phone died.",
    "Honestly I just want to sleep for a week.",
    "I finally finished that book I was reading, the ending was weird.",
    "The kids next door had a party until midnight.",
    "Thinking of booking something for {month}, no idea where yet.",
    "My {mother} rang, she wants us to visit soon.",
    "It's been ages since we went to a gig.",
    "We got a takeaway, I couldn't face cooking.",
    "There's a new bakery on our street, the sourdough is amazing.",
    "Our heating broke, the landlord says someone will come on {day}.",
    "I'm trying to run twice a week but it's not happening.",
    "Not much news really, same old.",
    "That sounds stressful, hope it settles down.",
    "Haha, typical.",
    "Oh no! Is everyone ok?",
    "Fingers crossed for you.",
    "Let me know how it goes.",
    "That's brilliant, well done!",
    "I saw a photo of {place} online and thought of you.",
    "We might do a day trip somewhere if the weather holds.",
    "I booked the car in for its service on {day}.",
    "Our cat knocked a plant off the windowsill again.",
    "{partner} is away for work until {day}, the house is very quiet.",
    "{partner} says hi by the way.",
    "I've got a dentist appointment on {day}, dreading it.",
    "We went to a friend's birthday dinner, way too much wine.",
    "I keep meaning to sort out my pension and never do.",
    "The football was on so the pub was packed.",
    "Bought new trainers, they're bright orange, no regrets.",
    "Was {weather} all weekend so we stayed in.",
]


def _fill(rng: random.Random, template: str, me: Person) -> str:
    return template.format(
        colleague=rng.choice(COLLEAGUES), food=rng.choice(FOODS), weather=rng.choice(WEATHERS), show=rng.choice(SHOWS),
        day=rng.choice(DAYS), chore=rng.choice(CHORES), place=rng.choice(PLACES), month=rng.choice(MONTHS),
        mother=me.mother_word, partner=me.partner)


def _small_talk(rng: random.Random, me: Person, n: int) -> list[str]:
    return [_fill(rng, rng.choice(SMALL_TALK), me) for _ in range(n)]


# -- facts ---------------------------------------------------------------------------------------
# Each maker returns (lines said in one session by `who`, the question, the needle), or for two-
# session kinds the lines of both sessions. Values differ per conversation (drawn from the seed).

PETS = ["Biscuit", "Pickle", "Waffles", "Juniper", "Mochi", "Pretzel"]
COMPANIES = ["Arup", "Halcrow Digital", "Northwind Logistics", "Brightfield Health", "Kestrel Labs", "Oakridge Media"]
ALLERGENS = ["sesame", "shellfish", "hazelnuts", "celery"]
CARS = [("Fiesta", "Skoda Octavia estate"), ("Corsa", "second-hand Nissan Leaf"), ("Polo", "Toyota Yaris hybrid"),
        ("Clio", "Kia Niro")]
BOOKS = ["Middlemarch", "The Remains of the Day", "Piranesi", "Station Eleven", "Klara and the Sun", "Stoner"]
RACES = ["Great North Run", "Berlin half", "Dublin half marathon", "Hackney Half"]
GIFTS = ["a pottery class voucher", "a bread maker", "a framed map of her village", "a silk scarf"]
TEACHERS = ["Mrs Okonjo", "Bernadette", "a retired violinist called Walter", "Signora Ricci"]
RESTAURANTS = [("Casa Lupita", "Hakkasan"), ("The Anchor", "Dishoom"), ("Bistro Lune", "Ottolenghi's place"),
               ("Mama Rosa's", "the Turkish grill on Elm Road")]
STREETS = ["Chapel Lane", "Brunswick Street", "Harrow Road", "Quarry Hill"]
NEIGHBOURHOODS = ["Headingley", "Ruzafa", "Ottensen", "Stoneybatter"]


def fact_makers(rng: random.Random, a: Person, b: Person):
    """The facts of one conversation, as (kind, speaker, lines, question, needle[, second session])."""
    pet, company = rng.choice(PETS), rng.choice(COMPANIES)
    allergen, (old_car, new_car) = rng.choice(ALLERGENS), rng.choice(CARS)
    book, race, gift, teacher = rng.choice(BOOKS), rng.choice(RACES), rng.choice(GIFTS), rng.choice(TEACHERS)
    (rest1, rest2), street, hood = rng.choice(RESTAURANTS), rng.choice(STREETS), rng.choice(NEIGHBOURHOODS)
    wed_day = rng.randint(3, 27)
    return [
        ("chat_fact", a, [f"Big news: we adopted a rescue greyhound! We're calling him {pet}.",
                          "He's scared of the stairs but he loves the sofa already."],
         f"what is the name of the dog {a.name} took in", pet),
        ("chat_fact", b, [f"I accepted the offer from {company}. Starting as a senior {b.job} there.",
                          "The money is better and it's closer to home."],
         f"which firm hired {b.name}", company),
        ("chat_fact", a, [f"Turns out I'm allergic to {allergen}, that's what the rash was.",
                          "The clinic did the skin prick test, so I'm reading every label now."],
         f"what can't {a.name} eat anymore", allergen),
        ("chat_fact", b, [f"Sold the old {old_car} at last. Got a {new_car} instead.",
                          "So much more room for the bikes."],
         f"what vehicle does {b.name} drive now", new_car),
        ("chat_fact", a, [f"The book club picked {book} for next month, I've already started it."],
         "which novel is the reading group doing", book),
        ("chat_fact", b, [f"I signed up for the {race}! Twelve weeks of training starts Monday."],
         f"which race is {b.name} getting ready for", race),
        ("chat_fact", a, [f"I got my {a.mother_word} {gift} for her birthday, I think she'll love it."],
         f"what present did {a.name} buy for her mother", gift),
        ("chat_fact", b, [f"I've started cello lessons! My teacher is {teacher}, she's strict but kind."],
         f"who gives {b.name} music lessons", teacher),
        ("chat_fact", a, [f"{a.sibling} got engaged! The wedding is on the {wed_day}th of June next year.",
                          "She wants it small, just family and a few friends."],
         f"when is {a.name}'s sister getting married", f"{wed_day}th of June"),
        # said in passing, in the middle of small talk, with no name in the question
        ("chat_fact", b, ["Physio says it's a torn meniscus, no running for six weeks."],
         "what's wrong with his knee", "torn meniscus"),
        # two sessions: a plan, and what became of it
        ("chat_multi", a, [f"For our anniversary we've booked {rest1} on Friday, can't wait."],
         f"where did {a.name} and {a.partner} end up having the anniversary dinner", rest1,
         (a, [f"{rest1} cancelled on us last minute! We went to {rest2} instead and it was even better."], rest2)),
        ("chat_multi", b, ["My cousin Aoife is coming over from Cork for a visit next month."],
         "how long is the cousin from Ireland staying", "Aoife",
         (b, ["Aoife landed yesterday, she's staying with us until the end of the month."], "until the end of the month")),
        # when things happened (the session's own words give the time)
        ("chat_time", a, ["Today was my first shift in the new role, I'm exhausted but happy."],
         f"when did {a.name} start the new position", "first shift in the new role"),
        ("chat_time", b, [f"We picked up the keys today! Moving into the flat on {street} this weekend."],
         f"what day did {b.name} get into the new home", street),
        # a plan that changed: the newer session holds the current state
        ("chat_update", a, [f"We're going to move to {hood} in the spring, we've seen a flat we like."],
         f"which neighbourhood is {a.name} living in now", hood,
         (a, [f"The {hood} flat fell through, so we're staying put and doing up the kitchen instead."], "staying put")),
        ("chat_update", b, ["The leaving party for Nadia is on the 12th at the Crown."],
         "what date is Nadia's farewell now", "12th at the Crown",
         (b, ["Nadia's do got moved to the 19th, the Crown had a double booking."], "moved to the 19th")),
    ]


# -- sessions ------------------------------------------------------------------------------------


def _session_lines(rng: random.Random, conv: Conversation, planted: list[tuple[Person, list[str]]]) -> list[tuple[Person, str]]:
    """A session's lines in order: greetings, small talk by turns, the planted facts in the middle."""
    n = rng.randint(34, 56)
    speakers = [conv.a, conv.b]
    lines: list[tuple[Person, str]] = [(conv.a, rng.choice(["Hey!", "Hiya", "Morning!", "Evening :)", "You around?"])),
                                       (conv.b, rng.choice(["Hey you", "Hi! Yes", "Hello hello", "Here!"]))]
    for i in range(n):
        me = speakers[i % 2]
        lines.append((me, " ".join(_small_talk(rng, me, rng.randint(1, 3)))))
    for who, said in planted:
        at = rng.randint(len(lines) // 4, 3 * len(lines) // 4)
        if lines[at][0] is not who:
            at += 1
        lines[at:at] = [(who, " ".join(said))]
    lines.append((speakers[len(lines) % 2], rng.choice(["Right, I'm off to bed. Night!", "Talk soon x",
                                                        "Gotta go, speak later", "Night night"])))
    return lines


def _turns(conv: Conversation, lines: list[tuple[Person, str]]) -> list:
    """Claude Code has two roles: person a's lines are user turns, person b's assistant turns.
    Consecutive lines of one person are joined into one turn."""
    turns = []
    for who, text in lines:
        role = U if who is conv.a else A
        said = f"{who.name}: {text}"
        if turns and turns[-1].role == ("user" if who is conv.a else "assistant"):
            turns[-1].text += "\n" + said
        else:
            turns.append(role(said))
    if turns and turns[0].role != "user":
        turns.insert(0, U(f"{conv.a.name}: hi"))
    return turns


def chat_specs() -> tuple[list[Spec], list[ChatQuery]]:
    specs: list[Spec] = []
    queries: list[ChatQuery] = []
    for conv in CONVERSATIONS:
        rng = random.Random("retrieval-chats:" + conv.key)
        project_cwd = f"/home/{conv.a.name.lower().replace('í', 'i')}/chats/{conv.key}"
        keys = [f"{conv.key}-{i:02d}" for i in range(SESSIONS_PER_CHAT)]
        planted: dict[int, list[tuple[Person, list[str]]]] = {i: [] for i in range(SESSIONS_PER_CHAT)}
        facts = fact_makers(rng, conv.a, conv.b)
        # one fact or one half of a pair per session at most, spread over the whole span; the
        # second half of a pair comes 2 to 8 sessions after the first
        free = list(range(SESSIONS_PER_CHAT - 1))
        rng.shuffle(free)
        project = project_cwd.rsplit("/", 1)[1]
        for fact in facts:
            kind, who, said, question, needle = fact[:5]
            first = free.pop()
            planted[first].append((who, said))
            relevant = [keys[first]]
            needles = [(keys[first], needle)]
            if len(fact) > 5:
                who2, said2, needle2 = fact[5]
                second = min(SESSIONS_PER_CHAT - 1, first + rng.randint(2, 8))
                planted[second].append((who2, said2))
                if second in free:
                    free.remove(second)
                needles.append((keys[second], needle2))
                relevant = [keys[second]] if kind == "chat_update" else [keys[first], keys[second]]
            queries.append(ChatQuery(kind, question, tuple(relevant), project, tuple(needles)))
        for i, key in enumerate(keys):
            days_ago = DAYS_SPANNED * (1 - i / SESSIONS_PER_CHAT) + rng.uniform(0, 5)
            lines = _session_lines(rng, conv, planted[i])
            specs.append(Spec(key, "claude", project_cwd, days_ago, _turns(conv, lines), branch="",
                              notes=f"chat {conv.key}, session {i}"))
    return specs, queries
