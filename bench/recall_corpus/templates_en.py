"""English material for the recall corpus: facts (with the questions that ask
for them, paraphrased rather than copied), corrections, dated events, third
parties, and the chatter that surrounds them.

Placeholders: {name} is the speaker who states the fact, {other} the one who
hears it; {p} and {rel} a third party and how the speaker knows them; the other
keys come from the kind's `values`. Questions never quote the statement: they
name the thing by another word where English allows ("dog" for "beagle",
"make a living" for "shift at the hospital").
"""

from __future__ import annotations

# --- Facts about the speaker ------------------------------------------------
# say: how the speaker lets it slip; ask: (question, answer) pairs, single-hop;
# cross: the same asked in Chinese; react: what a friend answers (human-human
# dialogs); topic: what an assistant acknowledges ("your dog").
SELF = {
    "dog": {
        "values": [
            {"dog": "Biscuit", "breed": "beagle"}, {"dog": "Pepper", "breed": "border collie"},
            {"dog": "Waffles", "breed": "corgi"}, {"dog": "Juno", "breed": "greyhound"},
            {"dog": "Mochi", "breed": "shiba inu"}, {"dog": "Ziggy", "breed": "dachshund"},
        ],
        "say": [
            "Sorry, I was out with {dog}. That {breed} has more energy than the two of us combined.",
            "{dog} chewed through another charging cable this morning. Nobody warned me a {breed} puppy would be this much work.",
            "We finally did it and brought home a little {breed}! We named him {dog}, after much arguing.",
        ],
        "ask": [("What is the name of {name}'s dog?", "{dog}"), ("What breed is {name}'s pet pup?", "{breed}")],
        "cross": [("{name}的狗叫什么名字？", "{dog}"), ("{name}养的狗是什么品种？", "{breed}")],
        "react": ["Haha, give him a scratch behind the ears from me.", "Oh no, the cables! At least he's cute.", "You have to send me pictures immediately."],
        "topic": "your dog",
    },
    "cat": {
        "values": [
            {"cat": "Miso", "color": "ginger"}, {"cat": "Pickle", "color": "tabby"}, {"cat": "Luna", "color": "black"},
            {"cat": "Clementine", "color": "grey"}, {"cat": "Tofu", "color": "white"},
        ],
        "say": [
            "{cat} knocked my glass off the table again while staring right at me. Classic {color} cat behaviour.",
            "Our {color} kitty {cat} has decided the laundry basket is her new bed.",
            "I have a {color} cat called {cat} and she runs this household, to be honest.",
        ],
        "ask": [("What is {name}'s cat called?", "{cat}"), ("What colour is {name}'s cat?", "{color}")],
        "cross": [("{name}的猫叫什么？", "{cat}")],
        "react": ["Cats really do just want to watch the world burn.", "That is the most cat thing I've ever heard."],
        "topic": "your cat",
    },
    "job": {
        "values": [
            {"role": "a pediatric nurse", "employer": "St. Anne's Hospital", "short": "nurse"},
            {"role": "a data analyst", "employer": "a freight startup called Haulwise", "short": "data analyst"},
            {"role": "a high-school chemistry teacher", "employer": "Westbrook High", "short": "chemistry teacher"},
            {"role": "a sous-chef", "employer": "Olive & Thyme", "short": "sous-chef"},
            {"role": "a UX designer", "employer": "Northwind Labs", "short": "UX designer"},
            {"role": "an electrician", "employer": "Brightline Electric", "short": "electrician"},
        ],
        "say": [
            "Twelve hours on my feet again today. Being {role} at {employer} is rewarding but my back hates me.",
            "Work has been wild. I've been {role} at {employer} for three years and this is the busiest it's ever been.",
        ],
        "ask": [("What does {name} do for a living?", "{short}"), ("Which place employs {name}?", "{employer}")],
        "cross": [("{name}是做什么工作的？", "{short}")],
        "react": ["I honestly don't know how you do it.", "Respect. I'd last about a day."],
        "topic": "your work",
    },
    "city": {
        "values": [
            {"city": "Portland", "area": "the Pearl District"}, {"city": "Leeds", "area": "Headingley"},
            {"city": "Denver", "area": "Capitol Hill"}, {"city": "Melbourne", "area": "Fitzroy"},
            {"city": "Toronto", "area": "Leslieville"}, {"city": "Edinburgh", "area": "Leith"},
        ],
        "say": [
            "It's pouring here in {city} again. At least our flat in {area} has a nice view of the rain.",
            "Living in {area} is great, everything in {city} is a short bike ride away.",
        ],
        "ask": [("In which city is {name}'s home?", "{city}"), ("Which neighbourhood does {name} live in?", "{area}")],
        "cross": [("{name}住在哪个城市？", "{city}")],
        "react": ["I've always wanted to visit!", "Sounds cosy, honestly."],
        "topic": "your neighbourhood",
    },
    "allergy": {
        "values": [
            {"food": "shellfish", "symptom": "my throat swells up"}, {"food": "peanuts", "symptom": "I end up in the ER"},
            {"food": "kiwi", "symptom": "my mouth itches for hours"}, {"food": "sesame", "symptom": "I get hives everywhere"},
            {"food": "strawberries", "symptom": "my face goes blotchy"},
        ],
        "say": [
            "I had to send the dish back, it had {food} in it and {symptom}. Waiters never believe me.",
            "Quick heads-up for the picnic: no {food} anywhere near me, {symptom}.",
        ],
        "ask": [("Which food causes {name} an allergic reaction?", "{food}"), ("What must {name} avoid eating for health reasons?", "{food}")],
        "cross": [("{name}对什么食物过敏？", "{food}")],
        "react": ["Yikes, noted. I'll double-check everything.", "That sounds scary, glad you're careful."],
        "topic": "your allergy",
    },
    "comfort_food": {
        "values": [{"dish": "mac and cheese"}, {"dish": "chicken pho"}, {"dish": "shakshuka"}, {"dish": "mushroom risotto"}, {"dish": "beef ramen"}],
        "say": [
            "Rough day, so I'm making {dish}. Nothing fixes my mood faster.",
            "Whenever I'm sick or sad it's {dish}, always has been, since I was a kid.",
        ],
        "ask": [("What dish does {name} cook when feeling down?", "{dish}")],
        "cross": [("{name}心情不好时会做什么吃的？", "{dish}")],
        "react": ["Okay now I'm hungry.", "Save me a bowl!"],
        "topic": "your comfort meal",
    },
    "instrument": {
        "values": [{"instrument": "cello"}, {"instrument": "ukulele"}, {"instrument": "trumpet"}, {"instrument": "banjo"}, {"instrument": "clarinet"}],
        "say": [
            "I practised the {instrument} for an hour tonight. My neighbours must be thrilled.",
            "Lesson number six on the {instrument} today and I can finally play a scale without wincing.",
        ],
        "ask": [("Which musical instrument is {name} learning to play?", "{instrument}")],
        "cross": [("{name}在学什么乐器？", "{instrument}")],
        "react": ["Play me something next time!", "Your neighbours are saints."],
        "topic": "your music lessons",
    },
    "team": {
        "values": [
            {"team": "the Seattle Sounders", "sport": "soccer"}, {"team": "the Green Bay Packers", "sport": "football"},
            {"team": "Leeds United", "sport": "football"}, {"team": "the Boston Celtics", "sport": "basketball"},
            {"team": "the Chicago Cubs", "sport": "baseball"},
        ],
        "say": [
            "Did you see {team} last night? I've supported them since I was six and they still break my heart.",
            "Season tickets for {team} finally came through. Best money I've spent all year.",
        ],
        "ask": [("Which sports club is {name} a fan of?", "{team}")],
        "cross": [("{name}支持哪支球队？", "{team}")],
        "react": ["Ha, loyalty like that deserves a trophy.", "One day they'll win it all. Maybe."],
        "topic": "your team",
    },
    "email": {
        "values": [
            {"email": "sunny.hollis@fastmail.com"}, {"email": "green.kettle.art@gmail.com"}, {"email": "p.raman.work@proton.me"},
            {"email": "mk.hollis@outlook.com"}, {"email": "jb_sketches@icloud.com"},
        ],
        "say": [
            "Send the photos to {email}, that's the address I actually check these days.",
            "New email address, by the way: {email}. The old one is drowning in spam.",
        ],
        "ask": [("Which email address should be used to write to {name}?", "{email}")],
        "cross": [("给{name}发邮件应该用哪个地址？", "{email}")],
        "react": ["Saved it.", "Got it, updating my contacts."],
        "topic": "the address",
    },
    "blog": {
        "values": [
            {"url": "https://slowkitchen.blog"}, {"url": "https://trailnotes.net/rosa"}, {"url": "https://www.plantsandpuns.com"},
            {"url": "https://owenbuilds.dev"}, {"url": "https://quietcorners.substack.com"},
        ],
        "say": [
            "I finally put my recipes online at {url} if you ever want to try any.",
            "I've been writing little posts on my site, {url}. Only my mum reads it so far.",
        ],
        "ask": [("What is the web address of {name}'s personal site?", "{url}")],
        "cross": [("{name}的个人网站网址是什么？", "{url}")],
        "react": ["Bookmarked! I'm reader number two now.", "Ooh, I'll check it out tonight."],
        "topic": "your site",
    },
    "car": {
        "values": [
            {"car": "Subaru Outback", "color": "dark green"}, {"car": "Honda Civic", "color": "silver"},
            {"car": "Volkswagen Golf", "color": "red"}, {"car": "Toyota Prius", "color": "white"}, {"car": "Mazda MX-5", "color": "blue"},
        ],
        "say": [
            "My {color} {car} made a horrible grinding noise on the motorway today. Mechanic tomorrow.",
            "I washed the {car} for the first time in months. Turns out it's actually {color}.",
        ],
        "ask": [("What model of car does {name} drive?", "{car}")],
        "cross": [("{name}开的是什么车？", "{car}")],
        "react": ["Ugh, car trouble is the worst.", "Ha, the mystery colour revealed."],
        "topic": "your car",
    },
    "birthday": {
        "values": [
            {"bday": "14 September", "age": "thirty-five"}, {"bday": "2 February", "age": "thirty"}, {"bday": "23 July", "age": "forty"},
            {"bday": "11 November", "age": "twenty-nine"}, {"bday": "30 April", "age": "thirty-three"},
        ],
        "say": [
            "I'll be {age} on {bday}. I'm trying to decide whether to throw a party or hide.",
            "Mark your calendar: {bday}, my birthday. I expect cake.",
        ],
        "ask": [("On what date does {name} celebrate turning a year older?", "{bday}")],
        "cross": [("{name}的生日是哪天？", "{bday}")],
        "react": ["Party, obviously. I'll bring the cake.", "Noted in the calendar!"],
        "topic": "your birthday",
    },
    "language": {
        "values": [{"lang": "Japanese", "days": "40"}, {"lang": "Portuguese", "days": "112"}, {"lang": "Korean", "days": "63"}, {"lang": "Italian", "days": "25"}, {"lang": "Greek", "days": "88"}],
        "say": [
            "{days}-day streak on my {lang} app! I can almost order food without pointing.",
            "I started {lang} lessons so I can talk to my partner's family. Grammar is humbling.",
        ],
        "ask": [("Which foreign tongue is {name} studying?", "{lang}")],
        "cross": [("{name}在学哪门外语？", "{lang}")],
        "react": ["That's impressive commitment.", "You'll be fluent by next year at this rate."],
        "topic": "your language practice",
    },
    "book": {
        "values": [
            {"book": "The Remains of the Day", "author": "Kazuo Ishiguro"}, {"book": "Piranesi", "author": "Susanna Clarke"},
            {"book": "East of Eden", "author": "John Steinbeck"}, {"book": "The Left Hand of Darkness", "author": "Ursula K. Le Guin"},
            {"book": "Middlemarch", "author": "George Eliot"},
        ],
        "say": [
            "I'm rereading {book} for the fourth time. Still the best novel ever written, fight me.",
            "If I could only keep one book it'd be {book} by {author}.",
        ],
        "ask": [("What novel does {name} consider the greatest of all time?", "{book}")],
        "cross": [("{name}最喜欢的小说是哪本？", "{book}")],
        "react": ["I keep meaning to read that one.", "Bold claim, but I respect it."],
        "topic": "your favourite book",
    },
    "drink": {
        "values": [{"drink": "a double espresso"}, {"drink": "matcha with oat milk"}, {"drink": "strong black tea"}, {"drink": "a flat white"}, {"drink": "yerba mate"}],
        "say": [
            "Can't start a day without {drink}. Don't talk to me before it.",
            "My morning order is always {drink}, the barista starts making it when I walk in.",
        ],
        "ask": [("What does {name} need to drink to get going each morning?", "{drink}")],
        "cross": [("{name}每天早上喝什么？", "{drink}")],
        "react": ["A person of routine, I love it.", "Ha, I'm the same with mine."],
        "topic": "your mornings",
    },
    "hobby": {
        "values": [
            {"hobby": "bouldering", "place": "the climbing gym on Fifth"}, {"hobby": "pottery", "place": "the ceramics studio downtown"},
            {"hobby": "birdwatching", "place": "the wetlands reserve"}, {"hobby": "salsa dancing", "place": "the community hall"},
            {"hobby": "woodworking", "place": "my garage workshop"},
        ],
        "say": [
            "Spent all Saturday at {place}. {hobby} is the only thing that switches my brain off.",
            "I've gotten really into {hobby} lately, it's become my whole weekend personality.",
        ],
        "ask": [("What pastime fills {name}'s weekends?", "{hobby}")],
        "cross": [("{name}周末的爱好是什么？", "{hobby}")],
        "react": ["Okay that sounds like fun, take me sometime.", "Love that for you."],
        "topic": "your weekends",
    },
    "rent": {
        "values": [{"amount": "$1,450"}, {"amount": "£1,180"}, {"amount": "$2,075"}, {"amount": "€990"}, {"amount": "$1,720"}],
        "say": [
            "The landlord emailed: rent is going up to {amount} a month. I nearly dropped my phone.",
            "We pay {amount} a month for a place where the shower has two settings: lava and glacier.",
        ],
        "ask": [("How much is {name}'s monthly housing payment?", "{amount} a month")],
        "cross": [("{name}每个月房租多少钱？", "{amount}")],
        "react": ["That's brutal.", "Housing is a scam, honestly."],
        "topic": "your rent",
    },
    "siblings": {
        "values": [{"n": "five", "sib": "four"}, {"n": "three", "sib": "two"}, {"n": "two", "sib": "one"}, {"n": "six", "sib": "five"}],
        "say": [
            "Growing up as one of {n} kids means I eat dinner in about ninety seconds.",
            "Family group chat is chaos, there are {n} of us children plus parents.",
        ],
        "ask": [("How many brothers and sisters does {name} have?", "{sib}")],
        "cross": [("{name}有几个兄弟姐妹？", "{sib}")],
        "react": ["That explains so much, haha.", "I can't imagine the noise at holidays."],
        "topic": "your family",
    },
    "fear": {
        "values": [{"thing": "deep water"}, {"thing": "heights"}, {"thing": "moths"}, {"thing": "thunderstorms"}, {"thing": "escalators"}],
        "say": [
            "Don't laugh, but I'm genuinely terrified of {thing}. Always have been.",
            "Everyone wanted to try it and I had to admit my phobia of {thing}.",
        ],
        "ask": [("What frightens {name}?", "{thing}")],
        "cross": [("{name}害怕什么？", "{thing}")],
        "react": ["No judgement, everyone has something.", "Totally valid."],
        "topic": "that",
    },
    "dream_trip": {
        "values": [{"place": "Patagonia"}, {"place": "the Faroe Islands"}, {"place": "Kyoto"}, {"place": "Namibia"}, {"place": "Iceland's highlands"}],
        "say": [
            "Someday I'm going to see {place}. It's been my screensaver for five years.",
            "If I won the lottery I'd be on a plane to {place} the same day.",
        ],
        "ask": [("What destination is at the top of {name}'s bucket list?", "{place}")],
        "cross": [("{name}梦想去哪里旅行？", "{place}")],
        "react": ["Take me with you!", "That would be unreal."],
        "topic": "that trip",
    },
    "commute": {
        "values": [{"km": "11", "mode": "bike"}, {"km": "7", "mode": "e-scooter"}, {"km": "15", "mode": "bike"}, {"km": "4", "mode": "walk"}],
        "say": [
            "It's {km} kilometres each way to work by {mode}, so I'm soaked by the time I arrive on rainy days.",
            "My {km} km {mode} commute is the only exercise I get some weeks.",
        ],
        "ask": [("How long is {name}'s trip to the office, distance-wise?", "{km} km")],
        "cross": [("{name}上班路程有多远？", "{km}公里")],
        "react": ["Respect, I'd just call in sick.", "That's a good workout though."],
        "topic": "your commute",
    },
    "studies": {
        "values": [
            {"subject": "marine biology", "uni": "the University of Plymouth"}, {"subject": "architecture", "uni": "Delft"},
            {"subject": "philosophy", "uni": "McGill"}, {"subject": "mechanical engineering", "uni": "Georgia Tech"},
            {"subject": "art history", "uni": "the Courtauld"},
        ],
        "say": [
            "Funny thing, I did my degree in {subject} at {uni} and now I use none of it.",
            "Back when I was studying {subject} at {uni} I lived on instant noodles.",
        ],
        "ask": [("What was {name}'s major at university?", "{subject}"), ("Where did {name} go to college?", "{uni}")],
        "cross": [("{name}大学读的是什么专业？", "{subject}")],
        "react": ["Ha, that's most of us.", "Instant noodles, the true student diet."],
        "topic": "your studies",
    },
    "board_game": {
        "values": [{"game": "Wingspan"}, {"game": "Catan"}, {"game": "Ticket to Ride"}, {"game": "Azul"}, {"game": "Terraforming Mars"}],
        "say": [
            "Game night on Friday, and yes, we're playing {game} again because I always win.",
            "I've played {game} so many times the box is held together with tape.",
        ],
        "ask": [("Which tabletop game does {name} play obsessively?", "{game}")],
        "cross": [("{name}最常玩哪款桌游？", "{game}")],
        "react": ["I demand a rematch.", "Classic choice."],
        "topic": "game night",
    },
    "plant": {
        "values": [{"plant": "a fiddle-leaf fig", "pname": "Gerald"}, {"plant": "a monstera", "pname": "Monty"}, {"plant": "a snake plant", "pname": "Sid"}, {"plant": "an orchid", "pname": "Olga"}],
        "say": [
            "My houseplant, {plant} I named {pname}, grew a new leaf and I'm irrationally proud.",
            "{pname} is dropping leaves again. Owning {plant} is like having a very dramatic roommate.",
        ],
        "ask": [("What did {name} name the houseplant?", "{pname}")],
        "cross": [("{name}给自己的盆栽起了什么名字？", "{pname}")],
        "react": ["Plant parent of the year.", "Ha, they're so dramatic."],
        "topic": "your plant",
    },
    "movie": {
        "values": [{"movie": "Spirited Away"}, {"movie": "Jaws"}, {"movie": "Amélie"}, {"movie": "The Princess Bride"}, {"movie": "Arrival"}],
        "say": [
            "Watched {movie} for probably the twentieth time. Still cried.",
            "If a film is on in my house it's {movie}, my partner is sick of it.",
        ],
        "ask": [("Which film does {name} rewatch endlessly?", "{movie}")],
        "cross": [("{name}反复看的电影是哪部？", "{movie}")],
        "react": ["Such a good one.", "I get it, comfort films are important."],
        "topic": "the film",
    },
    "phone": {
        "values": [{"phone": "+1 503 555 0142"}, {"phone": "07700 900 461"}, {"phone": "+61 412 555 019"}, {"phone": "+1 720 555 0198"}],
        "say": [
            "My number changed after the phone fiasco, it's {phone} now.",
            "If anything comes up while I'm travelling, text {phone}.",
        ],
        "ask": [("What number can {name} be texted on?", "{phone}")],
        "cross": [("{name}的电话号码是多少？", "{phone}")],
        "react": ["Saved!", "Got it."],
        "topic": "the number",
    },
    "vet": {
        "values": [{"vet": "Dr. Okafor", "clinic": "Riverside Animal Clinic"}, {"vet": "Dr. Lindqvist", "clinic": "Pawsome Vets"}, {"vet": "Dr. Haddad", "clinic": "Maple Street Vet"}],
        "say": [
            "We've been going to {vet} at {clinic} forever, the only vet who doesn't get bitten.",
            "Booked a check-up with {vet} at {clinic}. Wish me luck getting everyone into the carrier.",
        ],
        "ask": [("Who is the animal doctor {name} takes the pets to?", "{vet}")],
        "cross": [("{name}带宠物看的兽医是谁？", "{vet}")],
        "react": ["Good vets are gold.", "Good luck with the carrier wrestling!"],
        "topic": "the vet",
    },
    "address": {
        "values": [{"address": "14 Larch Road"}, {"address": "221 Alder Street, apartment 3B"}, {"address": "9 Quarry Lane"}, {"address": "57 Harbour View"}],
        "say": [
            "For the invitation, our place is {address}. Just ring the top buzzer.",
            "Packages keep going next door, even though it clearly says {address} on the door.",
        ],
        "ask": [("Where should mail for {name} be delivered?", "{address}")],
        "cross": [("{name}家的地址是什么？", "{address}")],
        "react": ["Noted for the party!", "Couriers, honestly."],
        "topic": "your address",
    },
}

# --- Facts about third parties ----------------------------------------------
# The statement names the person but not how the speaker knows them, so asking
# "what is Owen's sister allergic to?" needs the introduction too (multi-hop).
# Name -> "f" / "m", and the relations that say which (a sister is never Malik).
PEOPLE = {"Tessa": "f", "Malik": "m", "Luis": "m", "Hana": "f", "Tom": "m", "Greta": "f", "Daniel": "m", "Anjali": "f",
          "Felix": "m", "Imogen": "f", "Kofi": "m", "Sven": "m", "Bea": "f", "Rahul": "m"}
RELATIONS = ["sister", "brother", "cousin", "coworker", "best friend", "neighbour", "roommate", "aunt", "uncle", "partner"]
RELATION_GENDER = {"sister": "f", "aunt": "f", "brother": "m", "uncle": "m"}
INTRO = [
    "My {rel} {p} is coming over for dinner on Sunday, so the flat needs a serious clean.",
    "Had a long call with my {rel}, {p}. We talked for two hours without noticing.",
    "My {rel} {p} sent me the funniest meme this morning, I'm still laughing.",
    "Can't stay long, I promised my {rel} {p} I'd help move a sofa.",
]
INTRO_ASK = ("What is the name of {name}'s {rel}?", "{p}")
INTRO_CROSS = ("{name}的{rel_zh}叫什么名字？", "{p}")
RELATIONS_ZH = {"sister": "姐妹", "brother": "兄弟", "cousin": "表亲", "coworker": "同事", "best friend": "最好的朋友",
                "neighbour": "邻居", "roommate": "室友", "aunt": "姑姑", "uncle": "叔叔", "partner": "伴侣"}
OTHER = {
    "tp_allergy": {
        "values": [{"food": "peanuts"}, {"food": "eggs"}, {"food": "tree nuts"}, {"food": "mustard"}, {"food": "celery"}, {"food": "lupin flour"}],
        "say": [
            "{p} is seriously allergic to {food}, so whatever we cook this weekend can't have any in it.",
            "We had to leave the restaurant early because {p} reacted to {food} hidden in the sauce.",
        ],
        "ask": [("What can {p} not eat without a reaction?", "{food}")],
        "ask_rel": [("What food is {name}'s {rel} allergic to?", "{food}")],
        "cross": [("{p}对什么过敏？", "{food}")],
    },
    "tp_job": {
        "values": [{"job": "a firefighter"}, {"job": "a dental hygienist"}, {"job": "a park ranger"}, {"job": "a tattoo artist"}, {"job": "an air traffic controller"}],
        "say": [
            "{p} just got hired as {job}, which is perfect, honestly.",
            "{p} loves working as {job} even though the hours are strange.",
        ],
        "ask": [("What is {p}'s occupation?", "{job}")],
        "ask_rel": [("What line of work is {name}'s {rel} in?", "{job}")],
        "cross": [("{p}做什么工作？", "{job}")],
    },
    "tp_city": {
        "values": [{"city": "Lisbon"}, {"city": "Austin"}, {"city": "Glasgow"}, {"city": "Vancouver"}, {"city": "Copenhagen"}, {"city": "Auckland"}],
        "say": [
            "{p} finally packed up and moved to {city}. I'm happy but I miss having a neighbour to borrow sugar from.",
            "{p} keeps sending pictures from {city}, the new place looks gorgeous.",
        ],
        "ask": [("Where does {p} live these days?", "{city}")],
        "ask_rel": [("Which city is {name}'s {rel} based in now?", "{city}")],
        "cross": [("{p}现在住在哪座城市？", "{city}")],
    },
    "tp_pet": {
        "values": [{"animal": "parrot", "pet": "Captain"}, {"animal": "rabbit", "pet": "Clover"}, {"animal": "tortoise", "pet": "Gus"}, {"animal": "husky", "pet": "Blizzard"}, {"animal": "hamster", "pet": "Nibbles"}],
        "say": [
            "{p}'s {animal}, {pet}, escaped again and spent the night behind the fridge.",
            "{p} adopted a {animal} and named it {pet}. Instant obsession.",
        ],
        "ask": [("What is the name of {p}'s {animal}?", "{pet}")],
        "ask_rel": [("What kind of animal does {name}'s {rel} keep as a pet?", "{animal}")],
        "cross": [("{p}的宠物叫什么名字？", "{pet}")],
    },
    "tp_hobby": {
        "values": [{"hobby": "competitive chess"}, {"hobby": "beekeeping"}, {"hobby": "open-water swimming"}, {"hobby": "restoring old motorbikes"}, {"hobby": "karaoke"}],
        "say": [
            "{p} has gotten really into {hobby}, it's all anyone hears about at dinner.",
            "{p} spent the entire holiday on {hobby}. Dedication.",
        ],
        "ask": [("What is {p}'s big passion lately?", "{hobby}")],
        "ask_rel": [("What has {name}'s {rel} been obsessed with doing lately?", "{hobby}")],
        "cross": [("{p}最近迷上了什么爱好？", "{hobby}")],
    },
    "tp_birthday": {
        "values": [{"date": "3 June", "age": "50"}, {"date": "19 August", "age": "30"}, {"date": "8 December", "age": "65"}, {"date": "27 March", "age": "21"}],
        "say": [
            "{p} turns {age} on {date} and wants a surprise party that is, apparently, not a surprise.",
            "Reminder to self: {p}'s big birthday is {date}. {age}!",
        ],
        "ask": [("On which date is {p}'s birthday?", "{date}")],
        "ask_rel": [("What age is {name}'s {rel} turning this year?", "{age}")],
        "cross": [("{p}的生日是哪天？", "{date}")],
    },
}

# --- Dated events -------------------------------------------------------------
# {when} is a relative expression resolved against the session's date; the
# gold answer is the absolute date (or week) it points to.
EVENTS_PAST = {
    "half_marathon": {"say": ["I ran my first half marathon {when}! Legs are jelly but I finished.", "Crossed the finish line of a half marathon {when}, two hours and four minutes."],
                      "ask": "When did {name} complete a half marathon?", "cross": "{name}什么时候跑了半程马拉松？"},
    "driving_test": {"say": ["Passed my driving test {when}, third time lucky!", "I'm officially allowed on the road, I passed the test {when}."],
                     "ask": "When did {name} get a driving licence?", "cross": "{name}什么时候通过了驾照考试？"},
    "ankle": {"say": ["I sprained my ankle {when} playing five-a-side. Hobbling around like a pirate.", "Rolled my ankle {when} stepping off a kerb, so I'm on the sofa with ice."],
              "ask": "When did {name} hurt an ankle?", "cross": "{name}什么时候崴了脚？"},
    "lease": {"say": ["We signed the lease on the new flat {when}! Keys next month.", "Lease signed {when}, we're officially moving."],
              "ask": "When did {name} sign the rental contract?", "cross": "{name}什么时候签的租房合同？"},
    "promotion": {"say": ["Big news: I got promoted {when}. Team lead!", "They called me in {when} and told me I'm getting the senior title."],
                  "ask": "When did {name} receive a promotion at work?", "cross": "{name}什么时候升职的？"},
    "concert": {"say": ["Saw {band} live {when}, my ears are still ringing.", "The {band} gig {when} was the best show I've been to in years."],
                "values": [{"band": "Fleet Foxes"}, {"band": "Khruangbin"}, {"band": "Arctic Monkeys"}, {"band": "Phoebe Bridgers"}],
                "ask": "When did {name} go to the {band} concert?", "cross": "{name}什么时候去看了{band}的演唱会？"},
    "bike": {"say": ["I bought a second-hand road bike {when}, it's bright orange and I love it.", "Picked up a used road bike {when}, finally."],
             "ask": "When did {name} buy the bicycle?", "cross": "{name}什么时候买了自行车？"},
    "interview": {"say": ["I had the final interview {when}, now it's just waiting and refreshing my inbox.", "Final-round interview was {when}. I think it went okay?"],
                  "ask": "When was {name}'s last job interview round?", "cross": "{name}的最终面试是什么时候？"},
    "wedding": {"say": ["We went to my cousin's wedding {when}, I danced until my shoes gave up.", "My cousin got married {when}, gorgeous ceremony by the lake."],
                "ask": "When was the wedding of {name}'s cousin?", "cross": "{name}表亲的婚礼是什么时候？"},
    "tattoo": {"say": ["Got my first tattoo {when}, a tiny fern on my wrist.", "I finally got inked {when}, just a little fern."],
               "ask": "When did {name} get a tattoo?", "cross": "{name}什么时候去纹身的？"},
}
EVENTS_FUTURE = {
    "dentist": {"say": ["Dentist appointment {when} at 3 pm, dreading it already.", "I have to see the dentist {when}, that filling finally needs fixing."],
                "ask": "When is {name} seeing the dentist?", "cross": "{name}什么时候去看牙医？"},
    "flight": {"say": ["Our flight to {city} leaves {when}, super early.", "We fly out to {city} {when}! Need to pack."],
               "values": [{"city": "Reykjavik"}, {"city": "Montreal"}, {"city": "Seville"}, {"city": "Hanoi"}],
               "ask": "On what date is {name} flying to {city}?", "cross": "{name}哪天飞往{city}？"},
    "exam": {"say": ["My certification exam is {when}, so I'm basically living in the library.", "Exam day is {when}. Flashcards everywhere."],
             "ask": "When does {name} sit the certification test?", "cross": "{name}的认证考试是哪天？"},
    "moving": {"say": ["Moving day is {when}, boxes everywhere, please send snacks.", "The movers come {when}, I haven't packed a single plate."],
               "ask": "When is {name} moving house?", "cross": "{name}哪天搬家？"},
    "anniversary": {"say": ["My parents' 40th anniversary dinner is {when}, I'm in charge of the speech.", "We're celebrating my parents' ruby anniversary {when}."],
                    "ask": "When is the anniversary celebration for {name}'s parents?", "cross": "{name}父母的结婚纪念日聚会是哪天？"},
    "report": {"say": ["Please remind me that the quarterly report is due {when}, I'll forget otherwise.", "I need to hand in the grant report {when}, can you nudge me?"],
               "ask": "What is the deadline for {name}'s report?", "cross": "{name}的报告什么时候截止？"},
    "passport": {"say": ["I have to renew my passport before the trip, the appointment is {when}.", "Passport office appointment {when}, finally."],
                 "ask": "When is {name}'s appointment for the passport renewal?", "cross": "{name}什么时候去办护照续签？"},
}

# --- Corrections --------------------------------------------------------------
# old: the first statement; new: the correction, with the marker a person uses
# ("changed my mind", "actually", "no longer", "instead"). The question asks
# for what holds now; its evidence is the correction.
UPDATES = {
    "seat": {"values": [{"old": "window", "new": "aisle"}, {"old": "aisle", "new": "window"}],
             "old": ["On planes I always pick the {old} seat, it's non-negotiable.", "Book me a {old} seat please, I always sit there on flights."],
             "new": ["I changed my mind about seats: {new} seats from now on, please.", "Actually, scrap what I said about plane seats, I want the {new} one now."],
             "ask": ("Which seat does {name} prefer on a plane these days?", "{new}"), "cross": ("{name}现在坐飞机喜欢哪种座位？", "{new}")},
    "coffee": {"values": [{"old": "oat lattes", "new": "green tea"}, {"old": "cappuccinos", "new": "decaf americanos"}],
               "old": ["I live on {old}, three a day minimum.", "My usual is {old}, I could drink them all day."],
               "new": ["I no longer drink {old}. Doctor's orders, so it's {new} now.", "Switched to {new} instead of {old}, my sleep is so much better."],
               "ask": ("What is {name}'s current everyday drink?", "{new}"), "cross": ("{name}现在日常喝什么？", "{new}")},
    "employer": {"values": [{"old": "Acme Logistics", "new": "Fernbrook Studios"}, {"old": "Pinegrove Bank", "new": "Lumen Health"}],
                 "old": ["Another meeting marathon at {old} today.", "Things at {old} are okay, the coffee machine is the highlight."],
                 "new": ["Big change: I no longer work at {old}. I started at {new} last week.", "I quit {old}! I'm at {new} now and it's night and day."],
                 "ask": ("Which company does {name} work for now?", "{new}"), "cross": ("{name}现在在哪家公司上班？", "{new}")},
    "party_date": {"values": [{"old": "Saturday the 12th", "new": "Sunday the 20th"}, {"old": "Friday the 9th", "new": "Saturday the 17th"}],
                   "old": ["The housewarming is on {old}, you're coming, no excuses.", "Save the date for our barbecue: {old}."],
                   "new": ["Actually, the party moved to {new}, the landlord needed the garden that weekend.", "Change of plan, it's {new} now instead, sorry for the chaos."],
                   "ask": ("On which day is {name}'s party happening?", "{new}"), "cross": ("{name}的聚会定在哪天？", "{new}")},
    "budget": {"values": [{"old": "$1,200", "new": "$1,500"}, {"old": "$800", "new": "$650"}],
               "old": ["Our budget for the trip is {old}, all in.", "I'm capping holiday spending at {old}."],
               "new": ["Update on money: the trip budget is now {new}, not {old}.", "We reworked the numbers and the holiday budget is {new} instead."],
               "ask": ("How much can {name} spend on the vacation?", "{new}"), "cross": ("{name}旅行的预算是多少？", "{new}")},
    "paint": {"values": [{"old": "sunflower yellow", "new": "sage green"}, {"old": "navy blue", "new": "warm terracotta"}],
              "old": ["We're painting the kitchen {old} this weekend.", "Bought the paint for the kitchen: {old}."],
              "new": ["I changed my mind about the kitchen, we're going with {new} rather than {old}.", "Returned the tins, the kitchen is going to be {new} instead."],
              "ask": ("What colour will {name}'s kitchen walls be?", "{new}"), "cross": ("{name}家厨房要刷成什么颜色？", "{new}")},
    "diet": {"values": [{"old": "vegetarian", "new": "pescatarian"}, {"old": "vegan", "new": "vegetarian"}],
             "old": ["I've been {old} for two years now, it's easier than people think.", "Being {old} makes restaurant menus short, but I don't mind."],
             "new": ["I'm no longer strictly {old}, I eat fish again, so call me {new}.", "Actually I switched to being {new}, {old} got too hard with my schedule."],
             "ask": ("Which diet does {name} follow now?", "{new}"), "cross": ("{name}现在的饮食习惯是什么？", "{new}")},
    "vacation": {"values": [{"old": "Lisbon", "new": "Crete"}, {"old": "Vienna", "new": "the Scottish Highlands"}],
                 "old": ["Summer holiday plan: {old}, I've already got a guidebook.", "We're leaning towards {old} for the summer break."],
                 "new": ["Plans changed, we're doing {new} instead of {old} this summer.", "Actually, forget {old}, we booked {new}!"],
                 "ask": ("Where is {name} going for the summer holiday?", "{new}"), "cross": ("{name}暑假要去哪里？", "{new}")},
    "workout": {"values": [{"old": "spin classes", "new": "rock climbing"}, {"old": "yoga", "new": "swimming laps"}],
                "old": ["{old_cap} three times a week keeps me sane.", "I've been doing {old} every Tuesday and Thursday."],
                "new": ["I don't do {old} any more, it's {new} now, way more fun.", "I gave up {old}; {new} is my thing these days."],
                "ask": ("What exercise is {name} doing these days?", "{new}"), "cross": ("{name}现在做什么运动？", "{new}")},
    "call_time": {"values": [{"old": "3 pm", "new": "4:30 pm"}, {"old": "9 am", "new": "11 am"}],
                  "old": ["Our weekly call is Wednesdays at {old}, right?", "Let's keep the Wednesday catch-up at {old}."],
                  "new": ["Can we move the Wednesday call to {new} instead? {old} doesn't work any more.", "From now on the Wednesday catch-up is at {new}, not {old}."],
                  "ask": ("At what time is the Wednesday catch-up with {name} now?", "{new}"), "cross": ("和{name}的周三通话现在几点？", "{new}")},
    "kitten_name": {"values": [{"old": "Pickles", "new": "Noodle"}, {"old": "Shadow", "new": "Pretzel"}],
                    "old": ["We got a kitten! Calling him {old} for now.", "Meet {old}, our new kitten."],
                    "new": ["We renamed the kitten, he's {new} now, {old} never suited him.", "Kitten update: he answers to {new} now instead of {old}."],
                    "ask": ("What is {name}'s kitten called now?", "{new}"), "cross": ("{name}的小猫现在叫什么？", "{new}")},
    "email_change": {"values": [{"old": "dana.writes@yahoo.com", "new": "dana.k@hey.com"}, {"old": "hollowtree88@aol.com", "new": "m.ferris@pm.me"}],
                     "old": ["You can always reach me at {old}.", "My email is {old}, for the shared album invite."],
                     "new": ["I no longer use {old}; write to {new} instead.", "Email update: {new} is the one now, the old address is dead."],
                     "ask": ("Which email address is {name} using at the moment?", "{new}"), "cross": ("{name}现在用哪个邮箱？", "{new}")},
    "race_goal": {"values": [{"old": "a 10K", "new": "a full marathon"}, {"old": "a half marathon", "new": "a sprint triathlon"}],
                  "old": ["My big goal this year is {old} in the autumn.", "Training plan is set: {old} by October."],
                  "new": ["Actually I'm aiming higher now: {new} rather than {old}.", "Changed my mind on the race, it's going to be {new} instead."],
                  "ask": ("What race is {name} training for now?", "{new}"), "cross": ("{name}现在在为什么比赛训练？", "{new}")},
    "wake_time": {"values": [{"old": "6 am", "new": "7:15 am"}, {"old": "5:30 am", "new": "6:45 am"}],
                  "old": ["I get up at {old} every day, even weekends.", "Alarm goes off at {old}, no snooze allowed."],
                  "new": ["New routine: I'm no longer getting up at {old}, it's {new} now and I feel human.", "I moved my alarm to {new} instead of {old}."],
                  "ask": ("What time does {name} wake up these days?", "{new}"), "cross": ("{name}现在几点起床？", "{new}")},
}

# --- Requests with a deadline (an absolute date, written as the speaker says it) ---
DEADLINES = [
    ("Please remind me to send the signed lease back to the letting agent by {date}.", "What is the deadline for returning the signed lease?"),
    ("I need to submit my expense claims before {date}, keep me honest.", "By when must {name}'s expense claims be filed?"),
    ("Remind me to book the dog's vaccination by {date}, the vet fills up fast.", "What is the last day to schedule the pet's jab?"),
    ("The tax documents have to reach my accountant, Mr. Feld, by {date}.", "When is {name}'s paperwork due at the accountant's office?"),
    ("Can you make sure I order the birthday cake by {date}?", "What is the deadline to put in the cake order?"),
    ("I have to renew the car insurance no later than {date}.", "When does {name}'s vehicle cover need renewing?"),
]

# --- Several turns to one answer -----------------------------------------------
# Two statements on their own; the question needs both.
TRIPS = {"values": ["Oaxaca", "Tallinn", "Marrakech", "Hokkaido", "Sicily", "Vancouver Island", "Bruges", "Cape Town"],
         "say": ["Just got back from {place}, the food alone was worth the flight.", "Still jet-lagged from {place}, but what a trip.",
                 "Unpacking after a week in {place}. I already want to go back."],
         "ask": ("Which two places did {name} visit on trips this year?", "{a} and {b}"),
         "cross": ("{name}今年旅行去了哪两个地方？", "{a}和{b}")}
CLASSES = {"values": ["life drawing", "Italian cooking", "improv comedy", "beginner welding", "Spanish conversation", "watercolour"],
           "say": ["Signed up for a {cls} class on Monday evenings, first session was hilarious.", "My {cls} course started this week, I'm terrible and loving it."],
           "ask": ("What two evening courses has {name} enrolled in?", "{a} and {b}")}
COSTS = {"values": [("flights", "$640", 640, "hotel", "$910", 910), ("train tickets", "$220", 220, "cabin rental", "$780", 780),
                    ("festival passes", "$350", 350, "campervan hire", "$1,100", 1100)],
         "say_a": ["The {a_item} came to {a_cost} in the end, which hurt.", "Booked the {a_item}: {a_cost} total."],
         "say_b": ["And the {b_item} is {b_cost}, so that's sorted.", "{b_item_cap} confirmed at {b_cost}."],
         "ask": ("How much do {name}'s {a_item} and {b_item} cost together?", "${total}")}
# Two speakers compared (human-human only).
COMPARE = [("siblings", "Who has more brothers and sisters, {a} or {b}?"), ("commute", "Who has the longer commute, {a} or {b}?")]

# --- Chatter ----------------------------------------------------------------------
# Human-human exchanges: X starts, Y answers. Slots come from CHAT_POOLS.
CHAT_HUMAN = [
    [("X", "How was your weekend? Do anything fun?"), ("Y", "Pretty quiet, honestly. {weekend}. You?"), ("X", "Same, mostly {weekend_l}. Needed it.")],
    [("X", "Ugh, {weather} again today."), ("Y", "Tell me about it. {weather_reply}")],
    [("X", "Have you started watching {show} yet?"), ("Y", "Two episodes in! No spoilers please."), ("X", "My lips are sealed. Episode four though... wow.")],
    [("X", "What's for dinner at yours tonight?"), ("Y", "Probably {dinner}, nothing fancy. You?"), ("X", "Leftovers, the glamorous life.")],
    [("X", "I've had three coffees and it's not even noon."), ("Y", "{laugh} That kind of day?"), ("X", "That kind of week.")],
    [("X", "Random question: pineapple on pizza, yes or no?"), ("Y", "Yes, and I will not be taking questions."), ("X", "{laugh} I knew I liked you.")],
    [("X", "My phone fell in the sink this morning."), ("Y", "Oh no! Is it alive?"), ("X", "Sitting in a bowl of rice, praying.")],
    [("X", "Work today was {work_mood}."), ("Y", "Sorry to hear. Anything I can do?"), ("X", "Just talking helps, honestly.")],
    [("X", "I finally cleaned out my closet. Found a jacket I forgot I owned."), ("Y", "That's like free shopping!")],
    [("X", "Did you hear about the new bakery on the corner?"), ("Y", "Yes! Their cinnamon buns are dangerous."), ("X", "I've been twice already this week, no regrets.")],
    [("X", "I'm trying to read more instead of scrolling before bed."), ("Y", "How's that going?"), ("X", "Two nights of success, five of failure.")],
    [("X", "The neighbours are renovating again. Drilling at 8 am on a Saturday."), ("Y", "Criminal. Absolutely criminal.")],
    [("X", "What are you listening to lately?"), ("Y", "A lot of {music}. It's good for focusing."), ("X", "Send me a playlist!"), ("Y", "Will do.")],
    [("X", "I think I'm coming down with a cold."), ("Y", "Drink something warm and rest! Don't be a hero.")],
    [("X", "Traffic was a nightmare this morning, forty minutes to go three streets."), ("Y", "{laugh} The city is one big roadworks project.")],
    [("X", "I tried to make sourdough. It came out as a brick."), ("Y", "A very rustic brick, I'm sure."), ("X", "Could build a wall with it.")],
    [("X", "Long day. I'm just going to lie on the floor for a bit."), ("Y", "Floor time is valid self-care.")],
    [("X", "Guess who forgot their umbrella on the one rainy day."), ("Y", "You?"), ("X", "Me. Drenched.")],
    [("X", "Do you ever just stare at the fridge hoping new food appears?"), ("Y", "Every single evening.")],
    [("X", "I've started a puzzle with a thousand pieces. Send help."), ("Y", "{laugh} How far are you?"), ("X", "I have the edges. That's it.")],
    [("X", "What did you think of the finale of {show}?"), ("Y", "Mixed feelings. The last ten minutes were great though.")],
    [("X", "I keep seeing the same fox in the park every evening."), ("Y", "You have a fox friend now. That's lovely.")],
    [("X", "Any plans for tonight?"), ("Y", "{evening}. You?"), ("X", "Couch, blanket, bad TV.")],
    [("X", "My sister sent me a video of a dog skateboarding and I've watched it nine times."), ("Y", "Send it, obviously.")],
    [("X", "I'm so bad at replying to messages lately, sorry."), ("Y", "No worries at all, life gets busy.")],
    [("X", "The sunset tonight was unreal, all pink and orange."), ("Y", "I saw it too! Everyone on the street stopped to take photos.")],
    [("X", "I'm thinking of getting bangs."), ("Y", "Bold. I support you, but sleep on it."), ("X", "Wise. Very wise.")],
    [("X", "I burned toast so badly the smoke alarm went off."), ("Y", "{laugh} The classic morning alarm clock.")],
    [("X", "Do you remember that terrible karaoke night?"), ("Y", "I try very hard not to."), ("X", "{laugh} Fair.")],
    [("X", "Just finished a really good podcast episode about {podcast}."), ("Y", "Ooh, send me the link."), ("X", "Sent!")],
    [("X", "Is it weird that I talk to my plants?"), ("Y", "Not at all. They grow better, apparently.")],
    [("X", "I'm so tired, I put the cereal in the fridge and the milk in the cupboard."), ("Y", "{laugh} Go to bed immediately.")],
]
GREET_HUMAN = [
    [("X", "Hey {y}! Long time no talk, how have you been?"), ("Y", "Hey! Busy but good. It's been a while, what's new?")],
    [("X", "Morning {y}! Got a minute?"), ("Y", "Always! What's up?")],
    [("X", "Hi {y}, hope your week is going okay."), ("Y", "Hi! It's been a week, that's for sure. How about you?")],
    [("X", "{y}! I have so much to tell you."), ("Y", "Go on then, I'm all ears.")],
]
BYE_HUMAN = [
    [("X", "Okay, I should get going. Talk soon?"), ("Y", "Definitely. Take care!")],
    [("X", "Right, bedtime for me. Night!"), ("Y", "Night night, sleep well.")],
    [("X", "Gotta run, catch you later!"), ("Y", "Later! Have a good one.")],
]
REACT_HUMAN = ["Oh wow, really?", "Ha, that's so you.", "No way! Tell me more.", "Honestly, good for you.", "I love that.",
               "Oh no. Hang in there.", "Wait, seriously?", "That's brilliant news!", "Haha, of course.", "Fair enough!"]

# User-assistant exchanges: the user asks, the assistant answers.
CHAT_ASSISTANT = [
    [("X", "Can you suggest a quick dinner? I have {ing1} and {ing2} in the fridge."),
     ("Y", "Try a simple {ing1} and {ing2} stir-fry: sear the {ing1} first, add the {ing2}, then finish with soy sauce, garlic and a squeeze of lime. About twenty minutes.")],
    [("X", "What's a good way to stop procrastinating?"),
     ("Y", "Pick the smallest possible next step and set a 10-minute timer. Starting is the hardest part; momentum usually carries you after that.")],
    [("X", "Give me a short stretching routine for after sitting all day."),
     ("Y", "Try this: 30 seconds of neck rolls, a standing forward fold, a hip-flexor lunge on each side, and a doorway chest stretch. Five minutes total.")],
    [("X", "How do I keep basil alive indoors?"),
     ("Y", "Basil wants six or more hours of light, soil that drains well, and water only when the top centimetre is dry. Pinch the tops so it grows bushy.")],
    [("X", "Can you help me word a polite email declining a meeting?"),
     ("Y", "Sure: \"Thanks for the invitation. I won't be able to join this one, but I'd be glad to review the notes afterwards and follow up with any questions.\"")],
    [("X", "What's the difference between baking soda and baking powder?"),
     ("Y", "Baking soda is pure sodium bicarbonate and needs an acid to react; baking powder already contains the acid, so it works with just moisture and heat.")],
    [("X", "Recommend a podcast about {podcast}?"),
     ("Y", "Look for a narrative series on {podcast} with episodes under 40 minutes; they tend to be easier to follow on a commute. I can suggest a few search terms if you like.")],
    [("X", "Morning! Slow start today."), ("Y", "Good morning! Slow starts are fine. Anything you'd like to tackle first?")],
    [("X", "It's {weather} here today."), ("Y", "Sounds like a good day for something cosy indoors. Anything planned?")],
    [("X", "How long should I boil an egg for a jammy yolk?"), ("Y", "About six and a half minutes from boiling, then straight into cold water.")],
    [("X", "Explain compound interest in one paragraph."),
     ("Y", "Compound interest means you earn interest on your interest. Each period, the interest is added to the balance, so the next period's interest is calculated on a larger amount, and growth accelerates over time.")],
    [("X", "What's a fun fact to share at lunch?"), ("Y", "Octopuses have three hearts, and two of them stop beating when they swim.")],
    [("X", "Can you summarise the plot of {show} without spoilers?"),
     ("Y", "It follows a small group thrown together by an unexpected event, and most of the tension comes from the secrets they keep from one another. That's all I'll say!")],
    [("X", "Suggest a name for a book club."), ("Y", "How about \"Chapter and Verse\", \"The Spine Collectors\" or \"Bound Together\"?")],
    [("X", "How do I get a wine stain out of a cotton shirt?"),
     ("Y", "Blot, don't rub. Rinse from the back with cold water, then apply a little dish soap and hydrogen peroxide, and wash as usual before drying.")],
    [("X", "Thanks, that helped a lot."), ("Y", "Glad it helped! Let me know if anything else comes up.")],
    [("X", "I'm bored. Give me a tiny project for this evening."), ("Y", "Sort your phone photos from last month into an album, or write down three things you'd like to learn this year.")],
    [("X", "What's a good gift for someone who likes {music}?"), ("Y", "A good pair of headphones, a vinyl record from a favourite artist, or tickets to a small local gig.")],
    [("X", "Help me plan a 30-minute workout with no equipment."),
     ("Y", "Warm up for five minutes, then three rounds of: 12 squats, 10 push-ups, 20 mountain climbers, a 40-second plank and 12 lunges per side. Cool down with stretches.")],
    [("X", "Is it rude to leave a party without saying goodbye?"), ("Y", "It's common at big gatherings. A quick message to the host afterwards keeps it friendly.")],
    [("X", "What should I read next if I liked mystery novels?"), ("Y", "Try a classic locked-room mystery, or a modern literary thriller with an unreliable narrator.")],
    [("X", "Make me a grocery list for a week of simple lunches."),
     ("Y", "Wraps, hummus, cherry tomatoes, cucumbers, a rotisserie chicken, mixed leaves, feta, rice, canned chickpeas, eggs and some fruit for snacks.")],
    [("X", "Why does my laptop get so hot?"), ("Y", "Usually dust in the fans or background apps. Keep it on a hard surface and check which processes use the CPU.")],
    [("X", "Can you tell me a short joke?"), ("Y", "Why did the scarecrow win an award? Because he was outstanding in his field.")],
    [("X", "How many minutes of sunlight do I need for vitamin D?"),
     ("Y", "It depends on skin type, season and latitude; often 10 to 30 minutes of midday sun a few times a week is cited, but check with a doctor if you're concerned.")],
    [("X", "Translate 'good luck' into French."), ("Y", "\"Bonne chance.\"")],
    [("X", "What's a good houseplant for a dark room?"), ("Y", "A ZZ plant or a pothos; both tolerate low light and irregular watering.")],
    [("X", "Ugh, {work_mood} day."), ("Y", "Sorry to hear that. Want to talk it through, or would a distraction help more?")],
    [("X", "Any tips for falling asleep faster?"), ("Y", "Keep a regular bedtime, dim the lights an hour before, avoid screens in bed, and try slow breathing: in for four, out for six.")],
    [("X", "Write me a haiku about {weather_noun}."), ("Y", "Grey sky holds its breath / {weather_noun} taps the window glass / the kettle answers")],
]
GREET_ASSISTANT = [
    [("X", "Hi again!"), ("Y", "Hi! Good to see you. What can I help with today?")],
    [("X", "Hey, quick chat before work."), ("Y", "Of course. What's on your mind?")],
    [("X", "Good evening."), ("Y", "Good evening! How was your day?")],
]
BYE_ASSISTANT = [
    [("X", "That's all for now, thanks."), ("Y", "You're welcome. Have a good rest of your day!")],
    [("X", "Okay, signing off."), ("Y", "Take care, talk soon.")],
]
REACT_ASSISTANT = ["Thanks for letting me know about {topic}; I'll keep it in mind.", "Noted about {topic}.",
                   "That's good to know. Anything you'd like me to do with it?", "Got it. I'll remember that.",
                   "Thanks for sharing that about {topic}!", "Understood."]

CHAT_POOLS = {
    "weekend": ["Went for a long walk and read in the park", "Mostly cleaning and laundry", "Caught up on sleep",
                "Helped a friend paint a fence", "Farmers market and a nap"],
    "weekend_l": ["lazing around", "doing chores", "cooking", "walking"],
    "weather": ["grey drizzle", "gale-force wind", "sticky heat", "freezing fog", "sideways rain"],
    "weather_noun": ["rain", "fog", "wind", "snow"],
    "weather_reply": ["I've given up on my hair.", "My umbrella turned inside out twice.", "I'm staying inside with tea.", "At least the plants are happy."],
    "show": ["that heist series", "the new baking competition", "the detective show everyone talks about", "the space drama"],
    "dinner": ["pasta with whatever's in the fridge", "tacos", "a big salad", "soup and toast"],
    "laugh": ["Haha.", "Lol.", "Ha!", "Hahaha."],
    "work_mood": ["a total mess", "surprisingly good", "so boring", "one meeting after another"],
    "music": ["old jazz records", "lo-fi beats", "eighties synth-pop", "film soundtracks"],
    "evening": ["Yoga and an early night", "Dinner with a friend", "Finishing a book", "Nothing at all, bliss"],
    "podcast": ["deep-sea creatures", "the history of maps", "famous cons", "how cities work"],
    "ing1": ["tofu", "chicken", "chickpeas", "prawns", "halloumi"],
    "ing2": ["spinach", "peppers", "broccoli", "mushrooms", "courgettes"],
}
