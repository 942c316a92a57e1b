"""Word lists of the offline fact rules: attribute names, preference
categories, family relations, and the sentences facts are written in.

Keys are canonical across both languages ("我的邮箱" and "my email" are both
`<subject>.email`) so that a later value of the same key replaces the earlier
one, whichever language it was said in.
"""

from __future__ import annotations

# Attribute names (after "my ..." / "我的...") -> canonical key part. Only these
# make facts: "my guess is ...", "my point is ..." are talk, not attributes.
ATTRIBUTES = {
    "name": "name", "full name": "name", "first name": "name", "名字": "name", "姓名": "name",
    "chinese name": "name", "english name": "name", "中文名字": "name", "中文名": "name", "英文名字": "name",
    "英文名": "name", "全名": "name",
    "destination": "destination", "目的地": "destination", "travel dates": "trip_dates", "trip dates": "trip_dates",
    "行程": "trip_dates", "出行日期": "trip_dates",
    "email": "email", "email address": "email", "e-mail": "email", "e-mail address": "email", "mail": "email",
    "邮箱": "email", "电子邮箱": "email", "邮件地址": "email", "邮箱地址": "email",
    "phone": "phone", "phone number": "phone", "mobile": "phone", "mobile number": "phone", "cell": "phone",
    "cell number": "phone", "number": "phone", "电话": "phone", "手机": "phone", "手机号": "phone", "电话号码": "phone",
    "手机号码": "phone",
    "address": "address", "home address": "address", "place": "address", "flat": "address", "apartment": "address", "shipping address": "address", "地址": "address",
    "住址": "address", "家庭住址": "address",
    "birthday": "birthday", "birth date": "birthday", "date of birth": "birthday", "生日": "birthday",
    "city": "location", "hometown": "hometown", "家乡": "hometown", "老家": "hometown", "城市": "location",
    "job": "occupation", "occupation": "occupation", "profession": "occupation", "job title": "occupation",
    "职业": "occupation", "工作": "occupation",
    "company": "employer", "employer": "employer", "公司": "employer", "单位": "employer",
    "timezone": "timezone", "time zone": "timezone", "时区": "timezone",
    "age": "age", "年龄": "age",
    "budget": "budget", "total budget": "budget", "trip budget": "budget", "travel budget": "budget", "预算": "budget",
    "deadline": "deadline", "截止日期": "deadline",
    "username": "username", "handle": "username", "github": "github", "website": "website", "blog": "website",
    "passport number": "passport_number", "flight number": "flight_number", "seat number": "seat_number",
    "nationality": "nationality", "国籍": "nationality",
}
# Things said as "my <word> is ..." that are talk, not attributes of anyone.
NOT_ATTRIBUTES = frozenset([
    "question", "problem", "issue", "point", "guess", "bad", "pleasure", "fault", "mistake", "apologies",
    "understanding", "thought", "thoughts", "opinion", "answer", "code", "test", "turn", "concern", "idea", "plan",
    "goal", "hope", "dream", "day", "week", "life", "head", "heart", "reason", "suggestion", "advice", "take",
    "feeling", "feelings", "worry", "experience", "story", "favorite", "favourite", "bet", "gut", "mind", "vote",
    "impression", "understanding", "recommendation", "choice", "preference", "request", "job", "work", "fear",
    "hunch", "excuse", "attempt", "way", "thing", "stuff", "dates", "schedule", "trip", "flight", "hotel", "god", "gosh", "bad luck", "first time", "last time",
    "lips", "lip", "eyes", "hands", "feet", "legs", "back", "stomach", "mouth", "ears", "nose", "knees", "arms",
    "schedule", "calendar", "inbox", "bad", "treat", "fault", "apology", "pleasure",
    "问题", "意思", "想法", "看法", "错", "代码", "计划", "感觉", "建议",
])
# How a summary in the other language names an attribute.
ATTRIBUTE_LABELS = {
    "email": ("email", "邮箱"), "phone": ("phone number", "电话"), "address": ("address", "地址"),
    "birthday": ("birthday", "生日"), "hometown": ("hometown", "家乡"), "timezone": ("time zone", "时区"),
    "budget": ("budget", "预算"), "deadline": ("deadline", "截止日期"), "username": ("username", "用户名"),
    "github": ("GitHub", "GitHub"), "website": ("website", "网站"), "passport_number": ("passport number", "护照号"),
    "flight_number": ("flight number", "航班号"), "seat_number": ("seat number", "座位号"),
    "nationality": ("nationality", "国籍"),
}

# Family and other people one names by their relation -> (en, zh).
RELATIONS = {
    "partner": ("partner", "伴侣"), "wife": ("wife", "妻子"), "husband": ("husband", "丈夫"),
    "girlfriend": ("girlfriend", "女朋友"), "boyfriend": ("boyfriend", "男朋友"), "fiance": ("fiancé", "未婚夫"),
    "fiancé": ("fiancé", "未婚夫"), "fiancee": ("fiancée", "未婚妻"), "fiancée": ("fiancée", "未婚妻"),
    "spouse": ("spouse", "配偶"),
    "mom": ("mom", "妈妈"), "mother": ("mother", "母亲"), "dad": ("dad", "爸爸"), "father": ("father", "父亲"),
    "sister": ("sister", "姐妹"), "brother": ("brother", "兄弟"), "son": ("son", "儿子"), "daughter": ("daughter", "女儿"),
    "kid": ("kid", "孩子"), "child": ("child", "孩子"), "grandma": ("grandma", "奶奶"), "grandmother": ("grandmother", "祖母"),
    "grandpa": ("grandpa", "爷爷"), "grandfather": ("grandfather", "祖父"), "aunt": ("aunt", "阿姨"),
    "uncle": ("uncle", "叔叔"), "cousin": ("cousin", "表亲"), "friend": ("friend", "朋友"),
    "best friend": ("best friend", "最好的朋友"), "roommate": ("roommate", "室友"), "boss": ("boss", "老板"),
    "manager": ("manager", "经理"), "colleague": ("colleague", "同事"), "coworker": ("coworker", "同事"),
    "neighbor": ("neighbor", "邻居"), "neighbour": ("neighbour", "邻居"),
    "dog": ("dog", "狗"), "cat": ("cat", "猫"),
    "老婆": ("wife", "老婆"), "老公": ("husband", "老公"), "妻子": ("wife", "妻子"), "丈夫": ("husband", "丈夫"),
    "男朋友": ("boyfriend", "男朋友"), "女朋友": ("girlfriend", "女朋友"), "对象": ("partner", "对象"),
    "伴侣": ("partner", "伴侣"), "妈妈": ("mom", "妈妈"), "母亲": ("mother", "母亲"), "爸爸": ("dad", "爸爸"),
    "父亲": ("father", "父亲"), "姐姐": ("sister", "姐姐"), "妹妹": ("sister", "妹妹"), "哥哥": ("brother", "哥哥"),
    "弟弟": ("brother", "弟弟"), "儿子": ("son", "儿子"), "女儿": ("daughter", "女儿"), "孩子": ("kid", "孩子"),
    "朋友": ("friend", "朋友"), "同事": ("colleague", "同事"), "老板": ("boss", "老板"), "室友": ("roommate", "室友"),
}
# One of each at a time: "my partner is Sam" replaces an earlier partner's name.
SINGLE_RELATIONS = frozenset({"partner", "wife", "husband", "girlfriend", "boyfriend", "fiance", "fiancé",
                              "fiancee", "fiancée", "spouse", "老婆", "老公", "妻子", "丈夫", "男朋友", "女朋友",
                              "对象", "伴侣"})

# Preference objects -> category, so that "I prefer tea" and "我现在改喝咖啡了"
# land on the same key (<subject>.preference.drink).
CATEGORIES: dict[str, tuple[str, ...]] = {
    "drink": ("coffee", "tea", "green tea", "black tea", "latte", "espresso", "cappuccino", "americano", "juice",
              "water", "milk", "beer", "wine", "cola", "soda", "咖啡", "茶", "绿茶", "红茶", "奶茶", "果汁", "牛奶",
              "啤酒", "红酒", "可乐", "拿铁", "美式", "乌龙", "豆浆"),
    "diet": ("vegetarian", "vegan", "gluten-free", "keto", "halal", "kosher", "pescatarian", "素食", "吃素", "清真",
             "低碳水"),
    "food": ("pizza", "sushi", "noodles", "ramen", "rice", "pasta", "burger", "salad", "steak", "dumplings",
             "hot pot", "spicy food", "seafood", "chocolate", "火锅", "面条", "米饭", "饺子", "寿司", "披萨", "汉堡",
             "沙拉", "牛排", "川菜", "粤菜", "湘菜", "辣", "海鲜", "巧克力", "包子"),
    "color": ("red", "blue", "green", "yellow", "black", "white", "purple", "orange", "pink", "grey", "gray",
              "红色", "蓝色", "绿色", "黄色", "黑色", "白色", "紫色", "橙色", "粉色", "灰色"),
    "programming_language": ("python", "rust", "golang", "java", "javascript", "typescript", "c++", "kotlin",
                             "swift", "ruby", "php", "haskell", "scala", "elixir"),
    "editor": ("vim", "neovim", "emacs", "vs code", "vscode", "pycharm", "intellij", "sublime", "cursor"),
    "os": ("linux", "macos", "windows", "ubuntu", "debian", "arch"),
    "reply_style": ("short answers", "short replies", "concise", "brief", "detailed", "bullet points", "examples",
                    "简洁", "简短", "详细", "要点", "列表", "分点", "举例"),
    "language": ("english", "chinese", "mandarin", "cantonese", "japanese", "french", "german", "spanish",
                 "中文", "英文", "英语", "汉语", "普通话", "粤语", "日语"),
    "seat": ("window seat", "aisle seat", "middle seat", "exit row", "靠窗", "过道", "靠过道", "中间座"),
    "transport": ("train", "flying", "flight", "driving", "bike", "cycling", "subway", "metro", "bus", "高铁",
                  "火车", "飞机", "开车", "地铁", "骑车"),
    "music": ("jazz", "rock", "classical", "pop music", "hip hop", "blues", "爵士", "摇滚", "古典", "流行音乐", "民谣"),
    "sport": ("running", "swimming", "tennis", "basketball", "football", "soccer", "yoga", "hiking", "climbing",
              "badminton", "跑步", "游泳", "网球", "篮球", "足球", "瑜伽", "爬山", "徒步", "羽毛球", "攀岩"),
    "pet": ("cats", "dogs", "猫", "狗"),
    "meeting_time": ("morning meetings", "afternoon meetings", "mornings", "afternoons", "evenings",
                     "上午开会", "下午开会", "上午", "下午", "晚上"),
    "hotel": ("hotel", "hostel", "boutique hotel", "guesthouse", "b&b", "airbnb", "酒店", "民宿", "宾馆", "旅馆"),
    "airline": ("airline", "carrier", "航空公司", "航司"),
    "room": ("single room", "double room", "twin room", "suite", "sea view", "quiet room", "单人间", "双人间", "大床房",
             "套房", "海景房"),
}
# "my favorite <word>" / "最喜欢的<word>" -> category.
FAVORITE_WORDS = {
    "drink": "drink", "beverage": "drink", "food": "food", "dish": "food", "color": "color", "colour": "color",
    "language": "language", "programming language": "programming_language", "editor": "editor",
    "music": "music", "sport": "sport", "饮料": "drink", "食物": "food", "菜": "food", "颜色": "color",
    "语言": "language", "编程语言": "programming_language", "编辑器": "editor", "音乐": "music", "运动": "sport",
}

MONTHS_EN = ("january|february|march|april|may|june|july|august|september|october|november|december|"
             "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec")
# Occupations "I'm a/an ..." names.
OCCUPATIONS = (
    "engineer", "developer", "designer", "teacher", "doctor", "nurse", "student", "manager", "lawyer", "writer",
    "scientist", "researcher", "accountant", "consultant", "analyst", "artist", "chef", "programmer", "architect",
    "founder", "photographer", "tester", "pilot", "musician", "painter", "counselor", "therapist", "professor",
    "journalist", "editor", "dentist", "pharmacist", "mechanic", "electrician", "farmer", "firefighter",
    "police officer", "soldier", "veteran", "entrepreneur", "freelancer", "intern", "librarian", "translator",
)

# Capitalized words that are not someone's name.
NOT_NAMES = frozenset(
    [
        "I", "I'm", "I've", "I'd", "I'll", "The", "A", "An", "This", "That", "These", "Those", "It", "It's", "We",
        "We're", "You", "You're", "He", "She", "They", "My", "Our", "Your", "His", "Her", "Their", "Its", "Yes",
        "No", "Not", "And", "But", "So", "Or", "If", "Also", "Then", "What", "When", "Where", "How", "Why", "Which",
        "Who", "Whom", "Please", "Thanks", "Thank", "Hi", "Hello", "Hey", "Great", "Good", "Nice", "Sure", "Ok",
        "OK", "Okay", "Well", "Oh", "Ah", "Just", "Actually", "Maybe", "Today", "Tomorrow", "Yesterday", "Tonight",
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February",
        "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
        "Christmas", "Easter", "Let", "Let's", "Here", "There", "Now", "Sorry", "Wow", "Haha", "Lol", "Cool",
        "Awesome", "Sounds", "Seems", "Looks", "Do", "Does", "Did", "Is", "Are", "Was", "Were", "Be", "Been", "Can",
        "Could", "Would", "Should", "Will", "Shall", "Might", "Must", "Have", "Has", "Had", "English", "Chinese",
        "American", "Canadian", "British", "French", "German", "Spanish", "Italian", "Japanese", "Korean", "Indian",
        "Mexican", "Christian", "Catholic", "Jewish", "Muslim", "Buddhist", "Hindu", "Vegan", "Vegetarian", "Fine",
        "Happy", "Glad", "Excited", "Ready", "Back", "Home", "Done", "Busy", "Free", "Tired", "Sick", "New", "Old",
        "Still", "Really", "Very", "Even", "Only", "All", "Some", "Any", "Every", "Each", "Both", "Either",
        "Neither", "None", "One", "Two", "Three", "First", "Second", "Last", "Next", "Another", "Other", "Such",
        "Same", "Much", "Many", "More", "Most", "Few", "Less", "Least", "Own", "Update", "Note", "Btw", "FYI",
        "Anyway", "Everything", "Nothing", "Something", "Anything", "Everyone", "Someone", "Anyone", "Nobody"
    ]
)

# Fact sentences: {s} is the subject, {v} the value, {a} an attribute or relation label.
EN_TEMPLATES = {
    "name": "{s}'s name is {v}", "location": "{s} lives in {v}", "moving": "{s} is moving to {v}",
    "employer": "{s} works at {v}", "occupation": "{s} works as {v}", "age": "{s} is {v} years old",
    "allergy": "{s} is allergic to {v}", "not_allergic": "{s} is no longer allergic to {v}", "not_employer": "{s} no longer works at {v}",
    "prefer": "{s} prefers {v}", "like": "{s} likes {v}", "dislike": "{s} dislikes {v}",
    "no_longer": "{s} no longer likes {v}", "diet": "{s}'s diet: {v}", "attribute": "{s}'s {a} is {v}",
    "relation": "{s}'s {a} is {v}", "destination": "{s} is travelling to {v}", "trip_dates": "{s}'s trip is {v}",
}
ZH_TEMPLATES = {
    "name": "{s}叫{v}", "location": "{s}住在{v}", "moving": "{s}要搬到{v}", "employer": "{s}在{v}工作",
    "occupation": "{s}是{v}", "age": "{s}今年{v}岁", "allergy": "{s}对{v}过敏", "not_allergic": "{s}不再对{v}过敏", "not_employer": "{s}不再在{v}工作",
    "prefer": "{s}喜欢{v}", "like": "{s}喜欢{v}", "dislike": "{s}不喜欢{v}", "no_longer": "{s}不再喜欢{v}",
    "diet": "{s}饮食：{v}", "attribute": "{s}的{a}是{v}", "relation": "{s}的{a}是{v}",
    "destination": "{s}要去{v}", "trip_dates": "{s}的行程是{v}",
}
# How much a fact of each kind matters to later turns: who someone is and what
# can hurt them first, tastes last.
IMPORTANCE = {
    "name": 0.9, "allergy": 0.9, "not_allergic": 0.85, "diet": 0.8, "location": 0.8, "moving": 0.7,
    "employer": 0.75, "not_employer": 0.7, "occupation": 0.75, "age": 0.65, "relation": 0.75, "prefer": 0.65, "like": 0.55,
    "dislike": 0.55, "no_longer": 0.6, "destination": 0.8, "trip_dates": 0.8,
}
ATTRIBUTE_IMPORTANCE = {
    "name": 0.9, "email": 0.85, "phone": 0.85, "address": 0.8, "birthday": 0.7, "budget": 0.75, "deadline": 0.8,
    "location": 0.8, "hometown": 0.6, "occupation": 0.75, "employer": 0.75, "timezone": 0.6, "age": 0.65,
}
