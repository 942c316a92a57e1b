"""Chinese material for the recall corpus (a user talking to an assistant).

Same shape as templates_en: {name} is the user (Chinese form), {name_en} the
same name in English for the cross-language questions, whose answers give the
Chinese value with its English rendering. Questions paraphrase the statement
(宠物 for 猫, 上班的地方 for 公司名).
"""

from __future__ import annotations

SELF = {
    "cat": {
        "values": [
            {"cat": "团子", "cat_en": "Tuanzi", "color": "橘色", "color_en": "orange"},
            {"cat": "可乐", "cat_en": "Kele", "color": "黑色", "color_en": "black"},
            {"cat": "芝麻", "cat_en": "Zhima", "color": "三花", "color_en": "calico"},
        ],
        "say": [
            "刚才{cat}又把我桌上的水杯推下去了，{color}的猫是不是都这么调皮？",
            "我家{cat}最近特别黏人，我一坐下它就跳到我腿上。",
            "跟你说，我养了一只{color}的猫，叫{cat}，已经三岁了。",
        ],
        "ask": [("{name}家的宠物叫什么名字？", "{cat}")],
        "cross": [("What is the name of {name_en}'s cat?", "{cat} ({cat_en})")],
        "topic": "你的猫",
    },
    "job": {
        "values": [
            {"role": "产品经理", "role_en": "product manager", "employer": "星河科技", "employer_en": "Xinghe Tech"},
            {"role": "小学语文老师", "role_en": "primary-school Chinese teacher", "employer": "实验小学", "employer_en": "the Experimental Primary School"},
            {"role": "建筑设计师", "role_en": "architect", "employer": "筑境设计院", "employer_en": "Zhujing Design Institute"},
        ],
        "say": [
            "今天又加班到九点，在{employer}做{role}真的太累了。",
            "我在{employer}当{role}快四年了，最近项目一个接一个。",
        ],
        "ask": [("{name}是做什么职业的？", "{role}"), ("{name}在哪个单位上班？", "{employer}")],
        "cross": [("What is {name_en}'s job?", "{role} ({role_en})")],
        "topic": "你的工作",
    },
    "city": {
        "values": [
            {"city": "杭州", "city_en": "Hangzhou", "area": "西溪", "area_en": "Xixi"},
            {"city": "成都", "city_en": "Chengdu", "area": "玉林", "area_en": "Yulin"},
            {"city": "青岛", "city_en": "Qingdao", "area": "八大关", "area_en": "Badaguan"},
        ],
        "say": [
            "{city}这几天一直下雨，我们{area}这边的路都积水了。",
            "住在{city}{area}挺方便的，楼下就有菜市场。",
        ],
        "ask": [("{name}现在生活在哪座城市？", "{city}")],
        "cross": [("Which city does {name_en} live in?", "{city} ({city_en})")],
        "topic": "你住的地方",
    },
    "allergy": {
        "values": [
            {"food": "芒果", "food_en": "mango"}, {"food": "花生", "food_en": "peanuts"}, {"food": "虾", "food_en": "shrimp"},
        ],
        "say": [
            "我对{food}过敏，上次不小心吃了一点，嘴唇肿了一整天。",
            "点外卖的时候记得备注，我一碰{food}就起疹子。",
        ],
        "ask": [("{name}不能吃哪种食物？", "{food}")],
        "cross": [("What food is {name_en} allergic to?", "{food} ({food_en})")],
        "topic": "过敏的事",
    },
    "food": {
        "values": [{"dish": "番茄牛腩", "dish_en": "tomato beef brisket"}, {"dish": "酸菜鱼", "dish_en": "pickled-cabbage fish"}, {"dish": "麻辣香锅", "dish_en": "spicy stir-fry pot"}],
        "say": ["心情不好的时候我就做{dish}，吃完立刻满血复活。", "{dish}是我的治愈系美食，每周都要吃一次。"],
        "ask": [("{name}难过时靠吃什么来治愈？", "{dish}")],
        "cross": [("What is {name_en}'s comfort food?", "{dish} ({dish_en})")],
        "topic": "你喜欢的菜",
    },
    "instrument": {
        "values": [{"instrument": "古筝", "instrument_en": "guzheng"}, {"instrument": "尤克里里", "instrument_en": "ukulele"}, {"instrument": "大提琴", "instrument_en": "cello"}],
        "say": ["今晚练了一个小时{instrument}，手指都磨红了。", "报了一个{instrument}班，每周六上课，老师特别严格。"],
        "ask": [("{name}在学哪种乐器？", "{instrument}")],
        "cross": [("Which instrument is {name_en} learning?", "{instrument} ({instrument_en})")],
        "topic": "练琴",
    },
    "email": {
        "values": [{"email": "xiaoyu.lin@163.com"}, {"email": "linxy_design@qq.com"}, {"email": "yu.lin.work@outlook.com"}],
        "say": ["我换了新邮箱：{email}，以后文件都发这个。", "记一下我的邮箱 {email}，旧的那个不用了。"],
        "ask": [("给{name}发文件应该用哪个邮箱？", "{email}")],
        "cross": [("What email address does {name_en} use now?", "{email}")],
        "topic": "邮箱",
    },
    "blog": {
        "values": [{"url": "https://xiaoyu.notion.site/recipes"}, {"url": "https://www.douban.com/people/linxy"}, {"url": "https://linxiaoyu.cn"}],
        "say": ["我把自己做的菜谱整理在 {url} 上了，有空可以看看。", "我的个人主页是 {url}，最近更新了几篇游记。"],
        "ask": [("{name}的个人网页地址是什么？", "{url}")],
        "cross": [("What is the address of {name_en}'s personal web page?", "{url}")],
        "topic": "你的主页",
    },
    "car": {
        "values": [{"car": "比亚迪海豚", "car_en": "BYD Dolphin"}, {"car": "大众朗逸", "car_en": "VW Lavida"}, {"car": "特斯拉Model 3", "car_en": "Tesla Model 3"}],
        "say": ["我那辆{car}今天在高架上亮了故障灯，吓死我了。", "周末把{car}开去洗了，终于干净了。"],
        "ask": [("{name}开的是什么车？", "{car}")],
        "cross": [("What car does {name_en} drive?", "{car} ({car_en})")],
        "topic": "你的车",
    },
    "birthday": {
        "values": [{"bday": "9月14日", "bday_en": "14 September"}, {"bday": "2月2日", "bday_en": "2 February"}, {"bday": "7月23日", "bday_en": "23 July"}],
        "say": ["我的生日是{bday}，今年想去海边过。", "提醒你一下，{bday}是我生日，到时候要祝我生日快乐哦。"],
        "ask": [("{name}哪天过生日？", "{bday}")],
        "cross": [("When is {name_en}'s birthday?", "{bday} ({bday_en})")],
        "topic": "你的生日",
    },
    "language": {
        "values": [{"lang": "日语", "lang_en": "Japanese"}, {"lang": "西班牙语", "lang_en": "Spanish"}, {"lang": "韩语", "lang_en": "Korean"}],
        "say": ["我在用App学{lang}，已经连续打卡五十天了。", "最近开始学{lang}，语法真的太难了。"],
        "ask": [("{name}正在自学哪门外语？", "{lang}")],
        "cross": [("Which foreign language is {name_en} studying?", "{lang} ({lang_en})")],
        "topic": "学语言",
    },
    "book": {
        "values": [{"book": "《活着》", "book_en": "To Live"}, {"book": "《围城》", "book_en": "Fortress Besieged"}, {"book": "《三体》", "book_en": "The Three-Body Problem"}],
        "say": ["我又重读了一遍{book}，还是我心中最好的小说。", "要是只能留一本书，我一定选{book}。"],
        "ask": [("{name}心目中最好的一本小说是什么？", "{book}")],
        "cross": [("What is {name_en}'s favourite novel?", "{book} ({book_en})")],
        "topic": "这本书",
    },
    "drink": {
        "values": [{"drink": "冰美式", "drink_en": "iced americano"}, {"drink": "燕麦拿铁", "drink_en": "oat latte"}, {"drink": "普洱茶", "drink_en": "pu'er tea"}],
        "say": ["早上不来一杯{drink}我根本醒不过来。", "楼下咖啡店的店员看到我就开始做{drink}了。"],
        "ask": [("{name}每天早上靠喝什么提神？", "{drink}")],
        "cross": [("What does {name_en} drink every morning?", "{drink} ({drink_en})")],
        "topic": "早上的习惯",
    },
    "hobby": {
        "values": [{"hobby": "攀岩", "hobby_en": "rock climbing"}, {"hobby": "做陶艺", "hobby_en": "pottery"}, {"hobby": "观鸟", "hobby_en": "birdwatching"}],
        "say": ["这个周末又去{hobby}了，只有这时候脑子才能放空。", "最近迷上了{hobby}，周末基本都泡在这上面。"],
        "ask": [("{name}周末一般在忙什么爱好？", "{hobby}")],
        "cross": [("What hobby does {name_en} spend weekends on?", "{hobby} ({hobby_en})")],
        "topic": "你的爱好",
    },
    "rent": {
        "values": [{"amount": "4200元"}, {"amount": "3800元"}, {"amount": "5600元"}],
        "say": ["房东说下个月开始房租涨到{amount}一个月，太离谱了。", "我们现在每个月房租{amount}，热水器还时好时坏。"],
        "ask": [("{name}每月的住房开销是多少？", "每月{amount}")],
        "cross": [("How much rent does {name_en} pay per month?", "{amount}")],
        "topic": "房租",
    },
    "siblings": {
        "values": [{"n": "三", "sib": "两个", "sib_en": "two"}, {"n": "四", "sib": "三个", "sib_en": "three"}],
        "say": ["我们家有{n}个孩子，过年的时候热闹得不行。", "我是家里{n}个孩子里最小的，从小抢不到电视遥控器。"],
        "ask": [("{name}有几个兄弟姐妹？", "{sib}")],
        "cross": [("How many siblings does {name_en} have?", "{sib_en}")],
        "topic": "你家里",
    },
    "fear": {
        "values": [{"thing": "蛇", "thing_en": "snakes"}, {"thing": "坐过山车", "thing_en": "roller coasters"}, {"thing": "打雷", "thing_en": "thunder"}],
        "say": ["说出来你别笑，我特别怕{thing}，从小就怕。", "朋友们都想去，可我实在怕{thing}，只好找借口。"],
        "ask": [("什么东西会让{name}感到害怕？", "{thing}")],
        "cross": [("What is {name_en} scared of?", "{thing} ({thing_en})")],
        "topic": "这件事",
    },
    "dream_trip": {
        "values": [{"place": "冰岛", "place_en": "Iceland"}, {"place": "新疆喀纳斯", "place_en": "Kanas in Xinjiang"}, {"place": "新西兰", "place_en": "New Zealand"}],
        "say": ["总有一天我要去{place}，手机壁纸都换成那里了。", "如果中了彩票，我第二天就飞去{place}。"],
        "ask": [("{name}最向往的旅行目的地是哪里？", "{place}")],
        "cross": [("Where does {name_en} dream of travelling?", "{place} ({place_en})")],
        "topic": "这个旅行计划",
    },
    "commute": {
        "values": [{"line": "地铁2号线", "line_en": "Metro Line 2", "minutes": "四十分钟"}, {"line": "地铁10号线", "line_en": "Metro Line 10", "minutes": "五十分钟"}],
        "say": ["每天坐{line}上班，单程{minutes}，早高峰挤得像沙丁鱼。", "我通勤要坐{line}，路上{minutes}正好听播客。"],
        "ask": [("{name}上班搭哪条线路？", "{line}")],
        "cross": [("Which metro line does {name_en} take to work?", "{line} ({line_en})")],
        "topic": "通勤",
    },
    "studies": {
        "values": [{"subject": "环境工程", "subject_en": "environmental engineering", "uni": "浙江大学"}, {"subject": "新闻学", "subject_en": "journalism", "uni": "复旦大学"}],
        "say": ["我大学在{uni}读的是{subject}，结果现在完全用不上。", "当年学{subject}的时候天天泡实验室。"],
        "ask": [("{name}大学学的是哪个专业？", "{subject}")],
        "cross": [("What did {name_en} major in?", "{subject} ({subject_en})")],
        "topic": "你的专业",
    },
    "plant": {
        "values": [{"plant": "龟背竹", "plant_en": "monstera", "pname": "阿龟", "pname_en": "A-Gui"}, {"plant": "绿萝", "plant_en": "pothos", "pname": "小绿", "pname_en": "Xiaolü"}],
        "say": ["我的{plant}“{pname}”又长出一片新叶子，骄傲！", "{pname}最近叶子发黄，养{plant}好难啊。"],
        "ask": [("{name}给家里的绿植取了什么名字？", "{pname}")],
        "cross": [("What did {name_en} name the houseplant?", "{pname} ({pname_en})")],
        "topic": "你的植物",
    },
    "phone": {
        "values": [{"phone": "138 0571 2246"}, {"phone": "186 2817 4409"}],
        "say": ["我换号码了，新号是{phone}，有事打这个。", "出差期间有急事就打{phone}。"],
        "ask": [("{name}现在的手机号是多少？", "{phone}")],
        "cross": [("What is {name_en}'s phone number?", "{phone}")],
        "topic": "号码",
    },
    "address": {
        "values": [{"address": "文三路188号3单元502"}, {"address": "玉林北路27号2栋"}],
        "say": ["快递寄到{address}就行，放门口的柜子里。", "我们家地址是{address}，到了给我打电话。"],
        "ask": [("寄东西给{name}应该写什么地址？", "{address}")],
        "cross": [("What is {name_en}'s home address?", "{address}")],
        "topic": "地址",
    },
    "movie": {
        "values": [{"movie": "《千与千寻》", "movie_en": "Spirited Away"}, {"movie": "《大话西游》", "movie_en": "A Chinese Odyssey"}],
        "say": ["{movie}我看了不下二十遍，每次都哭。", "心情不好就重温{movie}，百看不厌。"],
        "ask": [("{name}反复重温的电影是哪部？", "{movie}")],
        "cross": [("Which film does {name_en} keep rewatching?", "{movie} ({movie_en})")],
        "topic": "这部电影",
    },
    "team": {
        "values": [{"team": "浙江队", "team_en": "Zhejiang FC"}, {"team": "广东宏远", "team_en": "Guangdong Southern Tigers"}],
        "say": ["昨晚{team}又输了，我从小支持他们，心都碎了。", "终于抢到{team}的季票了，今年最值的一笔钱。"],
        "ask": [("{name}是哪支球队的球迷？", "{team}")],
        "cross": [("Which team does {name_en} support?", "{team} ({team_en})")],
        "topic": "你的球队",
    },
    "board_game": {
        "values": [{"game": "卡坦岛", "game_en": "Catan"}, {"game": "璀璨宝石", "game_en": "Splendor"}],
        "say": ["周五桌游夜，又要玩{game}，因为我总是赢。", "{game}玩了太多次，盒子都用胶带粘起来了。"],
        "ask": [("{name}最爱玩的桌面游戏是什么？", "{game}")],
        "cross": [("Which board game does {name_en} play all the time?", "{game} ({game_en})")],
        "topic": "桌游",
    },
    "vet": {
        "values": [{"vet": "周医生", "vet_en": "Dr. Zhou", "clinic": "宠爱动物医院"}, {"vet": "何医生", "vet_en": "Dr. He", "clinic": "瑞派宠物医院"}],
        "say": ["我们一直找{clinic}的{vet}看病，唯一不被咬的医生。", "约了{clinic}的{vet}做体检，希望顺利把猫塞进航空箱。"],
        "ask": [("{name}的宠物一般找哪位兽医看？", "{vet}")],
        "cross": [("Which vet does {name_en} take the pet to?", "{vet} ({vet_en})")],
        "topic": "兽医",
    },
    "nickname": {
        "values": [{"nick": "小雨点", "nick_en": "Little Raindrop"}, {"nick": "鱼鱼", "nick_en": "Yuyu"}],
        "say": ["家里人都叫我“{nick}”，到现在都改不了口。", "我妈给我发消息还是叫我{nick}，好肉麻。"],
        "ask": [("{name}家里人怎么称呼她？", "{nick}")],
        "cross": [("What does {name_en}'s family call her?", "{nick} ({nick_en})")],
        "topic": "你的小名",
    },
}

PEOPLE = {"小周": "u", "阿杰": "m", "美玲": "f", "子涵": "u", "俊杰": "m", "思琪": "f", "浩然": "m", "婷婷": "f", "大伟": "m"}
PEOPLE_EN = {"小周": "Xiao Zhou", "阿杰": "A-Jie", "美玲": "Meiling", "子涵": "Zihan", "俊杰": "Junjie", "思琪": "Siqi", "浩然": "Haoran", "婷婷": "Tingting", "大伟": "Dawei"}
RELATIONS = ["表姐", "同事", "闺蜜", "室友", "舅舅", "邻居", "大学同学", "男朋友", "师兄"]
RELATION_GENDER = {"表姐": "f", "闺蜜": "f", "舅舅": "m", "男朋友": "m", "师兄": "m"}
RELATIONS_EN = {"表姐": "cousin", "同事": "coworker", "闺蜜": "best friend", "室友": "roommate", "舅舅": "uncle", "邻居": "neighbour",
                "大学同学": "college classmate", "男朋友": "boyfriend", "师兄": "senior from grad school"}
INTRO = [
    "我{rel}{p}周日要来家里吃饭，我得好好打扫一下。",
    "昨晚和我{rel}{p}视频聊了两个小时，聊得都忘了时间。",
    "我{rel}{p}给我发了个超搞笑的表情包，我笑到现在。",
    "等下要去帮我{rel}{p}搬沙发，不能聊太久。",
]
INTRO_ASK = ("{name}的{rel}叫什么名字？", "{p}")
INTRO_CROSS = ("What is the name of {name_en}'s {rel_en}?", "{p} ({p_en})")
OTHER = {
    "tp_allergy": {
        "values": [{"food": "鸡蛋", "food_en": "eggs"}, {"food": "坚果", "food_en": "nuts"}, {"food": "牛奶", "food_en": "milk"}, {"food": "海鲜", "food_en": "seafood"}, {"food": "芹菜", "food_en": "celery"}],
        "say": ["{p}对{food}严重过敏，这周聚餐的菜里一点都不能有。", "上次吃饭{p}因为{food}过敏提前走了，酱汁里藏着的。"],
        "ask": [("{p}吃什么会过敏？", "{food}")],
        "ask_rel": [("{name}的{rel}对什么过敏？", "{food}")],
        "cross": [("What is {p_en} allergic to?", "{food} ({food_en})")],
    },
    "tp_job": {
        "values": [{"job": "消防员", "job_en": "firefighter"}, {"job": "牙科护士", "job_en": "dental nurse"}, {"job": "纹身师", "job_en": "tattoo artist"}, {"job": "空乘", "job_en": "flight attendant"}, {"job": "护林员", "job_en": "forest ranger"}],
        "say": ["{p}刚刚找到工作，当{job}，特别适合。", "{p}虽然当{job}作息很乱，但是很喜欢这份工作。"],
        "ask": [("{p}从事什么职业？", "{job}")],
        "ask_rel": [("{name}的{rel}是做哪一行的？", "{job}")],
        "cross": [("What does {p_en} do for work?", "{job} ({job_en})")],
    },
    "tp_city": {
        "values": [{"city": "深圳", "city_en": "Shenzhen"}, {"city": "厦门", "city_en": "Xiamen"}, {"city": "大理", "city_en": "Dali"}, {"city": "西安", "city_en": "Xi'an"}, {"city": "哈尔滨", "city_en": "Harbin"}],
        "say": ["{p}终于搬去{city}了，我有点舍不得。", "{p}天天给我发{city}的照片，新家看起来好漂亮。"],
        "ask": [("{p}现在住在哪儿？", "{city}")],
        "ask_rel": [("{name}的{rel}现在在哪个城市生活？", "{city}")],
        "cross": [("Which city does {p_en} live in now?", "{city} ({city_en})")],
    },
    "tp_pet": {
        "values": [{"animal": "柯基", "animal_en": "corgi", "pet": "豆豆", "pet_en": "Doudou"}, {"animal": "兔子", "animal_en": "rabbit", "pet": "雪球", "pet_en": "Xueqiu"},
                   {"animal": "鹦鹉", "animal_en": "parrot", "pet": "船长", "pet_en": "Captain"},
                   {"animal": "乌龟", "animal_en": "tortoise", "pet": "慢慢", "pet_en": "Manman"}, {"animal": "仓鼠", "animal_en": "hamster", "pet": "花卷", "pet_en": "Huajuan"}],
        "say": ["{p}家的{animal}{pet}又跑丢了，最后在冰箱后面找到的。", "{p}领养了一只{animal}，起名叫{pet}，现在天天晒。"],
        "ask": [("{p}的{animal}叫什么？", "{pet}")],
        "ask_rel": [("{name}的{rel}养了什么动物？", "{animal}")],
        "cross": [("What is the name of {p_en}'s pet?", "{pet} ({pet_en})")],
    },
    "tp_hobby": {
        "values": [{"hobby": "下围棋", "hobby_en": "playing Go"}, {"hobby": "养蜂", "hobby_en": "beekeeping"}, {"hobby": "冬泳", "hobby_en": "winter swimming"}, {"hobby": "修老摩托车", "hobby_en": "restoring old motorbikes"}, {"hobby": "唱昆曲", "hobby_en": "Kunqu opera singing"}],
        "say": ["{p}最近迷上了{hobby}，吃饭的时候三句不离这个。", "{p}整个假期都在{hobby}，太有毅力了。"],
        "ask": [("{p}最近热衷于什么？", "{hobby}")],
        "ask_rel": [("{name}的{rel}最近痴迷什么活动？", "{hobby}")],
        "cross": [("What is {p_en} into lately?", "{hobby} ({hobby_en})")],
    },
}

EVENTS_PAST = {
    "half_marathon": {"say": ["我{when}跑完了人生第一个半程马拉松！腿都软了。", "{when}参加了半马，两小时零四分冲线。"], "ask": "{name}是哪天跑的半程马拉松？",
                      "cross": "When did {name_en} run a half marathon?"},
    "driving_test": {"say": ["我{when}终于拿到驾照了，第三次考才过！", "{when}科目三过了，驾照到手！"], "ask": "{name}什么时候考过驾照的？",
                     "cross": "When did {name_en} pass the driving test?"},
    "ankle": {"say": ["我{when}打羽毛球把脚崴了，现在只能瘸着走。", "{when}下楼梯没踩稳，脚踝肿了。"], "ask": "{name}什么时候扭伤了脚？",
              "cross": "When did {name_en} sprain an ankle?"},
    "lease": {"say": ["我们{when}签了新房子的租房合同，下个月拿钥匙！", "{when}把合同签了，正式要搬家啦。"], "ask": "{name}哪天签的租约？",
              "cross": "When did {name_en} sign the lease?"},
    "promotion": {"say": ["好消息：我{when}升职了，当上组长了！", "领导{when}找我谈话，说我升高级了。"], "ask": "{name}什么时候获得晋升的？",
                  "cross": "When did {name_en} get promoted?"},
    "concert": {"say": ["{when}去看了{band}的演唱会，耳朵现在还在嗡嗡响。", "{when}的{band}现场太好听了，这几年最棒的一场。"],
                "values": [{"band": "五月天", "band_en": "Mayday"}, {"band": "陈奕迅", "band_en": "Eason Chan"}], "ask": "{name}是什么时候去看{band}演唱会的？",
                "cross": "When did {name_en} see {band_en} in concert?"},
    "interview": {"say": ["我{when}参加了终面，现在就等通知了。", "终面是{when}，感觉还行吧？"], "ask": "{name}的最后一轮面试是哪天？",
                  "cross": "When was {name_en}'s final interview?"},
    "wedding": {"say": ["{when}去参加了表哥的婚礼，跳舞跳到鞋都坏了。", "我表哥{when}结婚了，湖边的仪式超美。"], "ask": "{name}表哥的婚礼是哪天办的？",
                "cross": "When was the wedding of {name_en}'s cousin?"},
    "bike": {"say": ["我{when}买了一辆二手公路车，亮橙色的，超喜欢。", "{when}终于入手了一辆二手公路车。"], "ask": "{name}是什么时候买的自行车？",
             "cross": "When did {name_en} buy the bicycle?"},
    "tattoo": {"say": ["我{when}纹了人生第一个纹身，手腕上一片小蕨叶。", "{when}终于去纹身了，就一片小小的叶子。"], "ask": "{name}哪天去纹的身？",
               "cross": "When did {name_en} get a tattoo?"},
}
EVENTS_FUTURE = {
    "dentist": {"say": ["{when}下午三点约了牙医，已经开始紧张了。", "我{when}得去看牙，那颗牙终于要补了。"], "ask": "{name}哪天去看牙？",
                "cross": "When is {name_en}'s dentist appointment?"},
    "flight": {"say": ["我们飞{city}的航班是{when}，特别早。", "{when}飞{city}！还没开始收拾行李。"],
               "values": [{"city": "东京", "city_en": "Tokyo"}, {"city": "曼谷", "city_en": "Bangkok"}], "ask": "{name}哪天坐飞机去{city}？",
               "cross": "When does {name_en} fly to {city_en}?"},
    "exam": {"say": ["我的注册考试在{when}，这几天基本住在图书馆。", "{when}考试，桌上全是复习卡片。"], "ask": "{name}的资格考试定在哪天？",
             "cross": "When is {name_en}'s certification exam?"},
    "moving": {"say": ["{when}搬家，家里全是纸箱子。", "搬家公司{when}来，我一个盘子都还没打包。"], "ask": "{name}什么时候搬家？",
               "cross": "When is {name_en} moving?"},
    "report": {"say": ["记得提醒我，季度报告{when}要交，不然我肯定忘。", "项目结题报告{when}截止，到时候催催我。"], "ask": "{name}的报告截止日期是哪天？",
               "cross": "When is {name_en}'s report due?"},
    "anniversary": {"say": ["我爸妈的结婚三十周年聚餐在{when}，我负责致辞。", "{when}给爸妈过结婚纪念日，饭店已经订好了。"], "ask": "{name}父母的结婚纪念日聚餐是哪天？",
                    "cross": "When is the anniversary dinner for {name_en}'s parents?"},
    "checkup": {"say": ["单位安排的体检在{when}，前一天晚上不能吃东西。", "{when}去体检，要空腹抽血。"], "ask": "{name}的年度体检安排在哪天？",
                "cross": "When is {name_en}'s annual health check?"},
    "passport": {"say": ["护照要续签，出入境那边约的是{when}。", "{when}去办护照，终于约上了。"], "ask": "{name}哪天去办护照？",
                 "cross": "When is {name_en}'s passport appointment?"},
}

UPDATES = {
    "seat": {"values": [{"old": "靠窗", "new": "靠过道", "new_en": "aisle"}],
             "old": ["坐飞机我一定要选{old}的座位。", "帮我订机票的话记得选{old}座位。"],
             "new": ["座位的事我改主意了：以后都要{new}的。", "其实我现在更喜欢{new}的座位，之前说的{old}不算了。"],
             "ask": ("{name}现在坐飞机想要什么位置？", "{new}"), "cross": ("Which seat does {name_en} want on planes now?", "{new} ({new_en})")},
    "coffee": {"values": [{"old": "拿铁", "new": "绿茶", "new_en": "green tea"}],
               "old": ["我每天至少三杯{old}。", "我平时就爱喝{old}，一天不喝就难受。"],
               "new": ["我已经不喝{old}了，医生让我改喝{new}。", "现在改喝{new}了，不再喝{old}，睡眠好多了。"],
               "ask": ("{name}现在日常喝的是什么？", "{new}"), "cross": ("What does {name_en} drink every day now?", "{new} ({new_en})")},
    "employer": {"values": [{"old": "蓝海传媒", "new": "云杉数据", "new_en": "Yunshan Data"}],
                 "old": ["今天在{old}又开了一整天会。", "{old}最近还行，就是茶水间的咖啡机老坏。"],
                 "new": ["跟你说个大变化：我已经不在{old}了，上周入职了{new}。", "我从{old}离职了！现在在{new}上班，感觉完全不一样。"],
                 "ask": ("{name}现在在哪家公司工作？", "{new}"), "cross": ("Which company does {name_en} work for now?", "{new} ({new_en})")},
    "party_date": {"values": [{"old": "12号周六", "new": "20号周日", "new_en": "Sunday the 20th"}],
                   "old": ["乔迁派对定在{old}，你可不能缺席哦。", "烧烤聚会就{old}了，记一下。"],
                   "new": ["其实派对改到{new}了，房东那周要用院子。", "计划有变，改成{new}了，不好意思折腾大家。"],
                   "ask": ("{name}的聚会最终定在哪天？", "{new}"), "cross": ("On which day is {name_en}'s party now?", "{new} ({new_en})")},
    "budget": {"values": [{"old": "8000元", "new": "12000元"}],
               "old": ["这次旅行的预算是{old}，全包。", "假期花销我控制在{old}以内。"],
               "new": ["预算更新一下：旅行预算现在是{new}，不是{old}了。", "我们重新算了一下，假期预算改成{new}。"],
               "ask": ("{name}这趟旅行能花多少钱？", "{new}"), "cross": ("What is {name_en}'s travel budget now?", "{new}")},
    "paint": {"values": [{"old": "奶油黄", "new": "雾霾蓝", "new_en": "hazy blue"}],
              "old": ["这周末我们要把厨房刷成{old}。", "厨房的油漆买好了，{old}。"],
              "new": ["厨房颜色我改主意了，不要{old}了，改成{new}。", "把油漆退了，厨房最后决定刷{new}。"],
              "ask": ("{name}家厨房墙面会是什么颜色？", "{new}"), "cross": ("What colour will {name_en}'s kitchen be?", "{new} ({new_en})")},
    "diet": {"values": [{"old": "吃素", "new": "只吃鱼和素", "new_en": "pescatarian"}],
             "old": ["我{old}已经两年了，其实没大家想的那么难。", "因为{old}，外面餐厅能点的菜不多。"],
             "new": ["我现在不再严格{old}了，开始吃鱼，算是{new}吧。", "其实我改成{new}了，{old}和工作节奏太难兼顾。"],
             "ask": ("{name}现在的饮食方式是怎样的？", "{new}"), "cross": ("What diet does {name_en} follow now?", "{new} ({new_en})")},
    "vacation": {"values": [{"old": "三亚", "new": "云南", "new_en": "Yunnan"}],
                 "old": ["暑假打算去{old}，攻略都买好了。", "我们暑假比较想去{old}。"],
                 "new": ["计划变了，暑假不去{old}了，改去{new}。", "其实{old}取消了，我们订了{new}！"],
                 "ask": ("{name}暑假要去哪里度假？", "{new}"), "cross": ("Where is {name_en} going for the summer holiday?", "{new} ({new_en})")},
    "workout": {"values": [{"old": "动感单车", "new": "游泳", "new_en": "swimming"}],
                "old": ["每周三次{old}，让我保持理智。", "我每周二、周四都去上{old}课。"],
                "new": ["我已经不上{old}了，现在改{new}，有意思多了。", "{old}放弃了，现在主要是{new}。"],
                "ask": ("{name}这阵子在做什么运动？", "{new}"), "cross": ("What exercise does {name_en} do these days?", "{new} ({new_en})")},
    "call_time": {"values": [{"old": "下午三点", "new": "下午四点半", "new_en": "4:30 pm"}],
                  "old": ["我们的周会是每周三{old}，对吧？", "周三的例会就定在{old}吧。"],
                  "new": ["周三的会能改到{new}吗？{old}我以后都不方便了。", "以后周三例会改到{new}，不再是{old}。"],
                  "ask": ("{name}的周三例会现在几点开？", "{new}"), "cross": ("What time is {name_en}'s Wednesday meeting now?", "{new} ({new_en})")},
    "email_change": {"values": [{"old": "lxy1990@sina.com", "new": "xiaoyu.l@foxmail.com"}],
                     "old": ["有事可以发邮件到{old}找我。", "相册共享邀请发到{old}就行。"],
                     "new": ["{old}我已经不用了，以后发{new}。", "邮箱更新：现在用{new}，旧的那个废了。"],
                     "ask": ("{name}目前在用哪个邮箱？", "{new}"), "cross": ("Which email address does {name_en} use now?", "{new}")},
    "wake_time": {"values": [{"old": "早上六点", "new": "七点一刻", "new_en": "7:15 am"}],
                  "old": ["我每天{old}起床，周末也一样。", "闹钟定在{old}，绝不赖床。"],
                  "new": ["作息改了：不再{old}起了，现在{new}起，感觉活过来了。", "我把闹钟改成{new}了，不是{old}了。"],
                  "ask": ("{name}这阵子几点起床？", "{new}"), "cross": ("What time does {name_en} get up these days?", "{new} ({new_en})")},
}

DEADLINES = [
    ("提醒我{date}之前把签好的租房合同寄回给中介。", "签好的租约最晚什么时候要寄回？"),
    ("报销单必须在{date}之前交，你监督我一下。", "{name}的报销材料截止到哪天？"),
    ("记得提醒我{date}前给猫预约打疫苗，医院很难约。", "给宠物约疫苗的最后期限是哪天？"),
    ("个税资料要在{date}之前交给会计冯老师。", "{name}要在哪天前把税务材料交给会计？"),
    ("帮我记着，{date}之前要订好生日蛋糕。", "订蛋糕的截止日期是什么时候？"),
]

TRIPS = {"values": ["景德镇", "敦煌", "厦门鼓浪屿", "桂林", "长白山", "泉州"],
         "say": ["刚从{place}回来，光是吃的就值回票价。", "{place}玩了一周，已经想再去一次了。"],
         "ask": ("{name}今年去过哪两个地方旅行？", "{a}和{b}"), "cross": ("Which two places did {name_en} travel to this year?", "{a} and {b}")}
CLASSES = {"values": ["素描", "粤菜烹饪", "即兴表演", "书法", "西班牙语口语"],
           "say": ["报了个周一晚上的{cls}课，第一节课笑死我了。", "我的{cls}课这周开课了，虽然很菜但很开心。"],
           "ask": ("{name}报名了哪两门晚间课程？", "{a}和{b}")}
COSTS = {"values": [("机票", "3200元", 3200, "酒店", "4500元", 4500), ("高铁票", "860元", 860, "民宿", "2100元", 2100)],
         "say_a": ["{a_item}最后花了{a_cost}，有点肉疼。", "{a_item}订好了，一共{a_cost}。"],
         "say_b": ["{b_item}是{b_cost}，这样就都搞定了。", "{b_item}也确认了，{b_cost}。"],
         "ask": ("{name}的{a_item}和{b_item}一共花了多少钱？", "{total}元")}

# English turns in the Chinese dialog (the user practising English), each
# with a question asked in Chinese about it.
ENGLISH_TURNS = [
    ("Let me practise my English today: my colleague Ethan is allergic to cashews, so the team lunch has to be nut-free.", "同事Ethan对什么过敏？", "cashews（腰果）"),
    ("Quick English note for my records: the conference hotel booking reference is HX-48213.", "会议酒店的预订编号是多少？", "HX-48213"),
    ("My English tutor is Mrs. Whitfield, and she grew up in Cardiff.", "晓雨的英语老师是在哪里长大的？", "Cardiff（加的夫）"),
    ("Writing in English for practice: the studio's wifi password is sunflower2023.", "工作室的无线网络密码是什么？", "sunflower2023"),
    ("In English, because my manager reads these notes: the client demo is with a company called Brightwave.", "客户演示是给哪家公司做的？", "Brightwave"),
]
REACT_ENGLISH = ["Your English is great! 记下了。", "Nice sentence! 我帮你记住了。", "写得很好，我记下来了。"]

CHAT_ASSISTANT = [
    [("X", "冰箱里只有{ing1}和{ing2}，晚饭吃什么好？"), ("Y", "可以做个{ing1}炒{ing2}：先把{ing1}煎一下，再下{ing2}，加点生抽和蒜末，二十分钟就能上桌。")],
    [("X", "总是拖延怎么办？"), ("Y", "试试把任务拆成最小的一步，然后定一个十分钟的计时器。开始往往是最难的，动起来就好了。")],
    [("X", "久坐之后有什么简单的拉伸动作吗？"), ("Y", "可以做颈部绕环三十秒、站姿体前屈、弓步拉伸髋部，再靠门框拉伸胸口，总共五分钟。")],
    [("X", "阳台上的薄荷老是蔫，怎么养？"), ("Y", "薄荷喜欢充足的散射光和湿润但不积水的土，表土干了再浇，经常掐尖会长得更茂盛。")],
    [("X", "帮我写一句婉拒会议的话。"), ("Y", "可以这样说：“感谢邀请，这次我没法参加，会后我会看一下纪要，有问题再和大家沟通。”")],
    [("X", "小苏打和泡打粉有什么区别？"), ("Y", "小苏打是碳酸氢钠，需要酸性物质才会起反应；泡打粉里已经含有酸，遇水受热就能发酵。")],
    [("X", "早上好！今天有点没精神。"), ("Y", "早上好！慢慢来，先喝点水。今天有什么想先处理的事吗？")],
    [("X", "今天{weather}。"), ("Y", "这种天气最适合在家待着了，有什么安排吗？")],
    [("X", "溏心蛋要煮几分钟？"), ("Y", "水开后煮六分半左右，然后马上放进冷水里。")],
    [("X", "用一段话解释一下复利。"), ("Y", "复利就是利息也会产生利息。每一期的利息加进本金，下一期按更大的本金计算，所以时间越长增长越快。")],
    [("X", "说个冷知识吧。"), ("Y", "章鱼有三颗心脏，游泳的时候其中两颗会暂停跳动。")],
    [("X", "给读书会起个名字？"), ("Y", "可以叫“书页之间”“慢读社”或者“一起翻页”。")],
    [("X", "白衬衫上沾了红酒怎么洗？"), ("Y", "先用纸吸，不要搓。从背面用冷水冲，再抹一点洗洁精和双氧水，最后正常洗。")],
    [("X", "谢谢，很有帮助。"), ("Y", "不客气！有其他问题随时问我。")],
    [("X", "无聊，给我一个今晚能做完的小事。"), ("Y", "把上个月的手机照片整理成相册，或者写下今年想学的三件事。")],
    [("X", "不用器械的三十分钟训练怎么安排？"), ("Y", "热身五分钟，然后三组：深蹲12个、俯卧撑10个、登山跑20个、平板支撑40秒、弓步每侧12个，最后拉伸。")],
    [("X", "推荐一部适合周末看的{show}吧。"), ("Y", "可以找一部单元剧，每集独立，周末看几集刚刚好，不会熬夜追。")],
    [("X", "笔记本电脑为什么这么烫？"), ("Y", "一般是风扇积灰或者后台程序太多。放在硬的桌面上用，再看看哪些进程占CPU。")],
    [("X", "讲个笑话吧。"), ("Y", "为什么稻草人得了奖？因为它在自己的领域里很出众。")],
    [("X", "“祝你好运”用法语怎么说？"), ("Y", "“Bonne chance.”")],
    [("X", "光线不好的房间适合养什么植物？"), ("Y", "金钱树或者绿萝都很耐阴，也不怕偶尔忘记浇水。")],
    [("X", "今天工作{work_mood}。"), ("Y", "辛苦了。想聊聊，还是需要转移一下注意力？")],
    [("X", "有什么快速入睡的办法？"), ("Y", "固定作息，睡前一小时调暗灯光，床上不看手机，试试四秒吸气、六秒呼气。")],
    [("X", "写一首关于{weather_noun}的短诗。"), ("Y", "{weather_noun}敲着窗，灰色的天屏住呼吸，水壶轻轻回应。")],
    [("X", "一周的简单午餐要买些什么？"), ("Y", "卷饼、鹰嘴豆泥、小番茄、黄瓜、烤鸡、生菜、米饭、鸡蛋，再买些水果当零食。")],
    [("X", "周末有什么不花钱的放松方式？"), ("Y", "去公园散步、逛图书馆、在家做顿饭，或者约朋友爬山都不错。")],
    [("X", "怎么礼貌地催同事交材料？"), ("Y", "可以说：“想确认一下那份材料的进度，周五前能给我吗？有需要我帮忙的地方随时说。”")],
    [("X", "最近总是失眠，好烦。"), ("Y", "听起来很辛苦。白天尽量晒晒太阳、少喝咖啡，如果持续很久，建议去看看医生。")],
    [("X", "推荐一个关于{podcast}的播客？"), ("Y", "可以搜一下讲{podcast}的叙事类节目，每集四十分钟以内的比较适合通勤听。")],
    [("X", "哈哈，今天在地铁上看到一只穿衣服的狗。"), ("Y", "好可爱！穿的是什么样的衣服？"), ("X", "黄色雨衣，还戴着小帽子。"), ("Y", "太有画面感了。")],
]
GREET_ASSISTANT = [
    [("X", "我又来啦！"), ("Y", "欢迎回来！今天想聊点什么？")],
    [("X", "上班前跟你聊两句。"), ("Y", "好呀，有什么事吗？")],
    [("X", "晚上好。"), ("Y", "晚上好！今天过得怎么样？")],
]
BYE_ASSISTANT = [
    [("X", "先这样，谢谢你。"), ("Y", "不客气，祝你今天愉快！")],
    [("X", "我去睡了，晚安。"), ("Y", "晚安，好好休息。")],
]
REACT_ASSISTANT = ["好的，关于{topic}我记住了。", "收到，{topic}我记下了。", "谢谢告诉我，有需要随时找我。", "明白了。", "了解，我会记住的。"]

CHAT_POOLS = {
    "weather": ["一直在下小雨", "风特别大", "闷热得要命", "雾很大"],
    "weather_noun": ["雨", "雾", "风", "雪"],
    "show": ["悬疑剧", "综艺", "纪录片", "动画"],
    "work_mood": ["一团糟", "出乎意料地顺利", "特别无聊", "全是会"],
    "podcast": ["深海生物", "地图的历史", "城市规划", "历史悬案"],
    "ing1": ["豆腐", "鸡胸肉", "鸡蛋", "虾仁"],
    "ing2": ["菠菜", "青椒", "西兰花", "蘑菇"],
}
