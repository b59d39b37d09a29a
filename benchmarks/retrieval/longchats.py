"""The long-chat set: a person's long conversations with an assistant over many sessions
(LongMemEval and LoCoMo style), where a personal fact is said once, in passing, among much
unrelated help, and asked about later with one or two of the fact's own words.

chats.py asks in other words on purpose (a literal index cannot bridge most of its questions).
This set is closer to real use and to the held-out sets: people ask with some of the fact's words
("what breed is my dog" for "we adopted a dog last weekend, a greyhound called Biscuit"), but the
words they share with the fact are everyday ones that many other sessions hold too (the dog-
training session, the neighbour's dog, hiking boots), and the fact is one line of 20 to 60 turns.

Each of the 5 users has 40 sessions over about two years, written as Claude Code transcripts
under `/home/<user>/<user>-assistant` (one project per user): the user's lines are the user turns, the
assistant's long replies the assistant turns. A session is about one everyday topic (a recipe, a
trip, training plans, a budget, a car, a garden...), drawn from a shared pool with seeded slots,
so every topic word recurs in many sessions. The facts are planted in sessions of other topics.

Question kinds
--------------
long_fact    a fact said once; the question shares one or two of its words   relevant: that session
long_multi   needs two sessions (two trips, two races...)                     relevant: both
long_time    asks when something happened (the session's date answers)        relevant: that session
long_update  a value changed later; asks for the current one                  relevant: the newer session

Everything is generated from a seed per user: two runs write the same words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from chats import ChatQuery
from specs._base import A, Spec, U

LONG_KINDS = ("long_fact", "long_multi", "long_time", "long_update")
SESSIONS_PER_USER = 40
DAYS_SPANNED = 700


@dataclass(frozen=True)
class User:
    key: str
    name: str
    city: str


USERS = [User("alex", "Alex", "Leeds"), User("sofia", "Sofia", "Valencia"), User("daniel", "Daniel", "Hamburg"),
         User("grace", "Grace", "Dublin"), User("omar", "Omar", "Glasgow")]

# -- the everyday topics: what the user asks for help with -------------------------------------------
# Each topic: the user's requests and the assistant's advice, with slots. Topic words (dog, hiking,
# car, book, race, trip, sister...) are the same words the questions use.

SLOTS = {
    "dish": ["a lentil soup", "a chicken traybake", "banana bread", "a vegetable curry", "fish pie", "a pasta bake",
             "falafel", "a beef stew", "a frittata", "overnight oats"],
    "place": ["Lisbon", "the Lake District", "Krakow", "Copenhagen", "the Scottish Highlands", "Seville", "Bruges",
              "the Black Forest", "Ljubljana", "Porto"],
    "month": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"],
    "plant": ["tomatoes", "basil", "a monstera", "courgettes", "strawberries", "a lemon tree", "lavender"],
    "n": ["two", "three", "four", "five", "six", "ten", "twelve"],
    "app": ["a spreadsheet", "a budgeting app", "my bank's app", "a notebook"],
    "thing": ["a new laptop", "a standing desk", "running shoes", "a coffee machine", "a bike", "noise-cancelling headphones"],
}

TOPICS = {
    "cooking": (["Can you give me a recipe for {dish}? Something easy for a weeknight.",
                 "How long does {dish} keep in the fridge?", "Can I freeze {dish}?",
                 "What can I serve with {dish} for guests?", "I don't have an oven thermometer, how do I know it's done?",
                 "Can you make it for {n} people?"],
                ["Here is a simple version of {dish}: prepare the vegetables first, then cook everything on a medium heat "
                 "and season at the end. It takes about forty minutes.",
                 "Cooked dishes like this keep three to four days in an airtight container in the fridge.",
                 "Yes, it freezes well for up to three months; thaw it overnight in the fridge before reheating.",
                 "A green salad, some crusty bread and a simple dessert would make a nice dinner for guests.",
                 "Check that it is piping hot in the middle and that any juices run clear.",
                 "Multiply the quantities and use a larger tray; the cooking time stays roughly the same."]),
    "travel": (["I'm thinking about a long weekend in {place} in {month}. Is that a good time to go?",
                "What should I see in {place} if I only have {n} days?", "Is it easy to get around {place} without a car?",
                "Any tips for packing light for a trip?", "How much should I budget per day in {place}?",
                "What's a good area to stay in?"],
               ["{month} is a good time for {place}: fewer crowds than summer, and most sights keep long opening hours.",
                "With {n} days, pick one neighbourhood a day and leave an afternoon free; the old town and the main "
                "museum are worth booking ahead.", "Public transport is good and the centre is walkable; a day pass is cheapest.",
                "Roll your clothes, bring one pair of shoes you can walk in all day, and keep liquids in one small bag.",
                "A mid-range budget is roughly what you would spend at home on food, plus transport and tickets.",
                "Stay near the centre or close to a main station so you can walk most places."]),
    "fitness": (["I want to get fitter, can you write me a training plan for {n} weeks?",
                 "How often should I run if I'm a beginner?", "My legs are sore after the gym, is that normal?",
                 "What should I eat before a long run?", "How do I stop getting a stitch when I run?",
                 "Is stretching before training actually useful?"],
                ["Start with three sessions a week: two easy runs and one strength session, adding ten percent a week.",
                 "Run three times a week with a rest day between runs; most beginners do best on easy, conversational pace.",
                 "Muscle soreness a day or two after training is normal and fades; rest, walk and drink water.",
                 "A light carbohydrate meal two hours before, like toast or oats, works for most people.",
                 "Slow down, breathe deeply and avoid a big meal just before you run.",
                 "A dynamic warm-up before training helps more than static stretching; keep long stretches for after."]),
    "dogs": (["How do I stop a dog pulling on the lead?", "What's a good age to start training a puppy?",
              "The neighbour's dog barks all day, how do I raise it politely?", "Which dog breeds are good with children?",
              "How much exercise does a dog need every day?", "Is it safe to give a dog peanut butter?"],
             ["Stop walking whenever the lead goes tight and reward the dog when it comes back to your side.",
              "You can start basic training as soon as a puppy comes home, with short sessions of a few minutes.",
              "Talk to your neighbour calmly, mention the times the dog barks, and suggest they may not know.",
              "Labradors, beagles and many mixed breeds tend to be patient with children; the individual dog matters most.",
              "Most dogs need at least an hour of walks and play a day, more for working breeds.",
              "Plain peanut butter without xylitol is safe in small amounts as a treat."]),
    "outdoors": (["What should I look for in hiking boots?", "Can you suggest a packing list for a day hike?",
                  "How do I plan a hiking route safely?", "What's the best way to avoid blisters on a long walk?",
                  "Is it worth buying walking poles?", "How do I read contour lines on a map?"],
                 ["Look for boots with a stiff sole, good ankle support and a waterproof lining; try them on in the afternoon.",
                  "Water, snacks, a waterproof jacket, a map, a charged phone, sun cream and a small first aid kit.",
                  "Check the weather, tell someone your route, and plan to be off the hills well before dark.",
                  "Wear wool socks, break in new boots first, and tape hot spots as soon as you feel them.",
                  "Poles help on steep descents and take strain off your knees.",
                  "Lines close together mean steep ground; each line is the same height above sea level."]),
    "car": (["My car is making a squeaking noise when I brake, what could it be?", "How often should a car be serviced?",
             "Is it worth switching to an electric car?", "How do I check the tyre pressure?",
             "What do I need to know before buying a used car?", "The car battery died this morning, what now?"],
            ["A squeak when braking is usually worn brake pads; have a garage check them soon.",
             "Most cars need a service every year or every 10,000 miles, whichever comes first.",
             "An electric car is cheaper to run if you can charge at home; check the range against your longest trips.",
             "Use a gauge when the tyres are cold and compare with the numbers inside the driver's door.",
             "Check the service history, the MOT record and the mileage, and take it for a long test drive.",
             "Try a jump start; if the battery keeps dying, have the battery and alternator tested."]),
    "money": (["Can you help me make a monthly budget? I use {app}.", "How much should I keep in an emergency fund?",
               "Is it better to pay off debt or save first?", "How do I stop spending so much on takeaways?",
               "What's a sinking fund?", "Should I switch energy supplier?"],
              ["List your income, then fixed costs, then savings, and give the rest a weekly spending limit.",
               "Three to six months of essential costs is the usual advice for an emergency fund.",
               "Pay off expensive debt first while keeping a small cushion for emergencies.",
               "Plan meals for the week, keep a few easy dinners in the freezer, and set a monthly takeaway allowance.",
               "A sinking fund is money you set aside each month for a known future cost, like car insurance.",
               "Compare tariffs once a year; a fixed deal can be cheaper if prices are rising."]),
    "reading": (["Can you recommend a book for a long train journey?", "How do I get back into reading?",
                 "What's a good book club discussion question?", "Audiobooks or paper books, what do you think?",
                 "Can you suggest some classic novels?", "How do I find time to read with a busy job?"],
                ["A gripping mystery or a short, funny novel works well on a train; pick something under 400 pages.",
                 "Start with ten minutes before bed and choose books you actually enjoy, not ones you feel you should read.",
                 "Ask which character changed the most, and whether the ending felt earned.",
                 "Both count; audiobooks are great for commutes and chores, paper for slow reading.",
                 "Classic novels worth trying: Pride and Prejudice, Jane Eyre, Great Expectations and Middlemarch.",
                 "Carry a book everywhere and read in the small gaps: queues, lunch breaks, the bus."]),
    "garden": (["When should I plant {plant}?", "Why are the leaves on my {plant} turning yellow?",
                "How often should I water {plant} in summer?", "What's an easy plant for a shady balcony?",
                "How do I make compost?", "Can I grow {plant} indoors?"],
               ["Plant {plant} once the risk of frost has passed, usually in late spring.",
                "Yellow leaves often mean too much water or not enough light; let the soil dry out between waterings.",
                "Water deeply two or three times a week in summer, in the morning or evening.",
                "Ferns, ivy and hostas cope well with shade and need little care.",
                "Mix green waste like peelings with brown waste like cardboard and turn it every few weeks.",
                "Yes, near a bright window, in a pot with drainage holes and good compost."]),
    "work": (["Can you help me write an email asking my manager for a day off?", "How do I prepare for a performance review?",
              "Any tips for running a better meeting?", "How do I say no to extra work politely?",
              "Can you improve this cover letter opening for me?", "I have a presentation on {month} the {n}th, any tips?"],
             ["Here's a short draft: say which day, why briefly, and how your work will be covered.",
              "Write down what you achieved, with numbers where possible, and one or two goals for next year.",
              "Send an agenda, start on time, and end with who does what by when.",
              "Thank them, explain what you are already working on, and ask which task should move.",
              "Open with the role and one concrete result you are proud of, then say why this company.",
              "Practise out loud, keep slides simple, and tell the audience at the start what they will learn."]),
}

CHATTER = ["Thanks, that's really helpful!", "Great, I'll try that.", "Makes sense.", "Perfect, thank you.",
           "Hmm, I'm not sure that will work for me.", "Ok, one more question.", "Sorry, I got distracted, where were we?",
           "That's a lot to take in, can you summarise?", "Cool, good to know.", "Brilliant."]
REPLIES = ["You're welcome! Let me know if there's anything else.", "Happy to help.",
           "In short: keep it simple and start small.", "No problem, take your time.",
           "Of course, ask away.", "Glad that helps."]

# -- the facts ----------------------------------------------------------------------------------------
# Values drawn per user. A maker gives (kind, what the user says, the question, the needle[, the second
# session's line and needle]). Questions share one or two of the fact's words, never its value.

VALUES = {
    "breed": [("greyhound", "Biscuit"), ("beagle", "Pickle"), ("whippet", "Juniper"), ("collie", "Mochi"),
              ("spaniel", "Waffles")],
    "peak": ["Ben Nevis", "Snowdon", "the Zugspitze", "Triglav", "Scafell Pike"],
    "company": ["Brightfield Health", "Kestrel Labs", "Northwind Logistics", "Oakridge Media", "Halcyon Energy"],
    "allergen": ["sesame", "shellfish", "hazelnuts", "celery", "mustard"],
    "car": ["a blue Skoda Octavia", "a second-hand Nissan Leaf", "a Toyota Yaris hybrid", "a red Kia Niro", "a Mazda 3"],
    "instrument": ["cello", "ukulele", "saxophone", "piano", "drums"],
    "city": ["Toronto", "Melbourne", "Vienna", "Nairobi", "Osaka"],
    "book": ["Piranesi", "Station Eleven", "Klara and the Sun", "Stoner", "The Remains of the Day"],
    "race": ["the Great North Run", "the Berlin half marathon", "the Dublin marathon", "the Hackney Half",
             "the Edinburgh 10k"],
    "restaurant": ["Casa Lupita", "Bistro Lune", "The Anchor", "Mama Rosa's", "Dishoom"],
    "gift": ["a pottery class voucher", "a bread maker", "a framed map of his village", "a fishing rod", "a record player"],
    "language": ["Portuguese", "Japanese", "Italian", "Greek", "Korean"],
    "km": ["eight", "eleven", "fourteen", "six", "nine"],
    "country": [("Japan", "Peru"), ("Iceland", "Morocco"), ("Vietnam", "Chile"), ("Norway", "Jordan"),
                ("Mexico", "Georgia")],
    "school": [("Hillcrest Primary", "St Anne's"), ("Oakfield", "Riverside Academy"), ("Greenway", "Maple Park School"),
               ("Brookside", "the Montessori on Elm Road"), ("Westgate", "Ashdown Primary")],
    "dentist": ["Dr Okafor", "Dr Lindqvist", "Dr Moreau", "Dr Patel", "Dr Kowalski"],
    "plant_fact": ["fiddle-leaf fig", "bonsai juniper", "orchid", "olive tree", "cactus collection"],
}


def fact_makers(rng: random.Random, user: User, values: dict) -> list[tuple]:
    breed, pet = values["breed"]
    c1, c2 = values["country"]
    s1, s2 = values["school"]
    return [
        ("long_fact", f"By the way, we finally adopted a dog last weekend, a {breed} called {pet}.",
         "what breed is my dog", breed),
        ("long_fact", f"Last spring I went hiking up {values['peak']} with my brother, best day of the year.",
         "where did I go hiking last spring", values["peak"]),
        ("long_fact", f"Oh, and I got the job! I start at {values['company']} next month.",
         "which company gave me the job", values["company"]),
        ("long_fact", f"Please keep in mind I'm allergic to {values['allergen']}.",
         "what am I allergic to", values["allergen"]),
        ("long_fact", f"For context, my car is {values['car']}, about six years old.",
         "what kind of car do I have", values["car"]),
        ("long_fact", f"I've been taking {values['instrument']} lessons on Thursdays, it's my new hobby.",
         "which instrument lessons am I taking", values["instrument"]),
        ("long_fact", f"My sister moved to {values['city']} in the summer, so I'm planning a visit.",
         "where did my sister move to", values["city"]),
        ("long_fact", f"Our book club picked {values['book']} this month, I'm halfway through.",
         "which book did the book club pick", values["book"]),
        ("long_fact", f"I've signed up for {values['race']}, so the training matters now.",
         "what race did I sign up for", values["race"]),
        ("long_fact", f"For our anniversary we went to {values['restaurant']}, the tasting menu was incredible.",
         "where did we go for our anniversary", values["restaurant"]),
        ("long_fact", f"I bought my dad {values['gift']} for his sixtieth, he loved it.",
         "what did I buy my dad for his sixtieth", values["gift"]),
        ("long_fact", f"I'm learning {values['language']} on an app every morning before work.",
         "which language am I learning on the app", values["language"]),
        ("long_fact", f"My commute is {values['km']} kilometres each way, I cycle most days.",
         "how long is my commute", f"{values['km']} kilometres"),
        ("long_fact", f"My dentist, {values['dentist']}, says I grind my teeth at night.",
         "what is my dentist's name", values["dentist"]),
        # two sessions
        ("long_multi", f"Just got back from two weeks in {c1}, the trip of a lifetime.",
         "which countries did I visit on my big trips", c1,
         (f"Back from the trip to {c2}! Still jet-lagged.", c2)),
        ("long_multi", f"Ran my first 10k race on Sunday, finished in {rng.randint(52, 64)} minutes.",
         "how did my races go, the 10k and the half marathon", "first 10k race",
         (f"I finished the half marathon in two hours {rng.randint(1, 29)}, so happy.", "half marathon in two hours")),
        # when
        ("long_time", "We picked up the keys to our new flat today, finally homeowners!",
         "when did we get the keys to the new flat", "keys to our new flat"),
        ("long_time", "I had my wisdom tooth out this morning, face like a hamster.",
         "when did I have my wisdom tooth removed", "wisdom tooth out"),
        ("long_time", f"My {values['plant_fact']} arrived today, it's on the windowsill.",
         f"when did the {values['plant_fact']} arrive", values["plant_fact"]),
        # a value that changed: the newer session is the answer
        ("long_update", f"My daughter goes to {s1}, it's just round the corner.",
         "which school does my daughter go to now", s1,
         (f"We moved my daughter to {s2} after half term, she's much happier.", s2)),
        ("long_update", f"My manager is called {rng.choice(['Greg', 'Helen', 'Marek'])} and he's fine.",
         "who is my manager now", "My manager is called",
         (f"Quick update: I have a new manager, {rng.choice(['Fatima', 'Tariq', 'Joy'])}, since the reorganisation.",
          "a new manager")),
    ]


# -- sessions -----------------------------------------------------------------------------------------


def _fill(rng: random.Random, text: str) -> str:
    return text.format(**{k: rng.choice(v) for k, v in SLOTS.items()})


def _exchanges(rng: random.Random, topic: str, n: int) -> list[tuple[str, str]]:
    """n (user, assistant) exchanges about one topic, with chatter in between."""
    asks, advice = TOPICS[topic]
    out = []
    for i in range(n):
        if i and rng.random() < 0.3:
            out.append((rng.choice(CHATTER), rng.choice(REPLIES)))
            continue
        j = rng.randrange(len(asks))
        extra = " ".join(_fill(rng, rng.choice(advice)) for _ in range(rng.randint(2, 5)))
        out.append((_fill(rng, asks[j]), _fill(rng, advice[j]) + " " + extra))
    return out


def long_chat_specs() -> tuple[list[Spec], list[ChatQuery]]:
    specs: list[Spec] = []
    queries: list[ChatQuery] = []
    for user in USERS:
        rng = random.Random("retrieval-longchats:" + user.key)
        values = {k: rng.choice(v) for k, v in VALUES.items()}
        cwd = f"/home/{user.key}/{user.key}-assistant"
        project = cwd.rsplit("/", 1)[1]
        keys = [f"{user.key}-{i:02d}" for i in range(SESSIONS_PER_USER)]
        planted: dict[int, list[str]] = {i: [] for i in range(SESSIONS_PER_USER)}
        free = list(range(SESSIONS_PER_USER - 1))
        rng.shuffle(free)
        for fact in fact_makers(rng, user, values):
            kind, said, question, needle = fact[:4]
            first = free.pop()
            planted[first].append(said)
            needles, relevant = [(keys[first], needle)], [keys[first]]
            if len(fact) > 4:
                said2, needle2 = fact[4]
                second = min(SESSIONS_PER_USER - 1, first + rng.randint(3, 12))
                planted[second].append(said2)
                if second in free:
                    free.remove(second)
                needles.append((keys[second], needle2))
                relevant = [keys[second]] if kind == "long_update" else [keys[first], keys[second]]
            queries.append(ChatQuery(kind, question, tuple(relevant), project, tuple(needles)))
        topics = list(TOPICS)
        for i, key in enumerate(keys):
            exchanges = _exchanges(rng, rng.choice(topics), rng.randint(10, 30))  # 20-60 turns
            for said in planted[i]:
                at = rng.randint(len(exchanges) // 4, 3 * len(exchanges) // 4)
                ask, answer = exchanges[at]
                # said in passing, before or after the request of that turn
                ask = f"{said} {ask}" if rng.random() < 0.5 else f"{ask} {said}"
                exchanges[at] = (ask, answer)
            turns = []
            for ask, answer in exchanges:
                turns += [U(ask), A(answer)]
            days_ago = DAYS_SPANNED * (1 - i / SESSIONS_PER_USER) + rng.uniform(0, 5)
            specs.append(Spec(key, "claude", cwd, days_ago, turns, branch="", notes=f"assistant chat {user.key}, session {i}"))
    return specs, queries
