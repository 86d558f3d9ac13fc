// Package rules is the built-in rule planner: the default agent.Planner of `devicectl sim`
// and `devicectl serve`. It needs no network and no model. It reads what was said, in Chinese
// or English, with a fixed grammar, calls the device's and the server's tools that the turn
// lists (TurnContext.Tools), and streams a short reply in the language it was spoken to: any
// CJK character makes the reply Chinese, otherwise it is English.
//
// # What it understands
//
// Volume (amplify_volume {"level"}, a control tool; bounds from its schema, 0..100):
//
//	把音量调到30  音量三十  音量调成百分之五十  调到二十五  音量60%
//	set the volume to 50  turn it down to 20  volume 80  set volume to fifty five
//	静音 安静 / mute, be quiet (0)   最大音量 / max volume (100)   最小音量 / min volume (0)
//	取消静音 / unmute (50)
//
// Relative volume reads the level with get_device_status first, then moves by 10 (Options.Step)
// or by the amount said, clamped to the schema's bounds, and says the new level:
//
//	大声一点  大点声  声音大一点  声音太大了  小声点  音量加二十  调小十
//	louder  quieter  too loud  turn it up  turn it down  turn it up by 25  volume down 5
//
// Face (set_virtual_human_expression {"expression"}; only values its schema's enum lists):
//
//	笑一个 微笑 开心 -> smile          smile, look happy, grin -> smile
//	惊讶 吃惊 -> amazed                 look amazed, surprised, wow -> amazed
//	哭 伤心 -> cry                      cry, sad -> cry
//	闭眼 睡觉 -> close_eyes             close your eyes, go to sleep -> close_eyes
//	眯眼笑 闭眼笑 -> close_eyes_smile   squint, close your eyes and smile -> close_eyes_smile
//	恢复正常 平静 别哭 -> idle          neutral, back to normal, stop smiling -> idle
//
// Status (get_device_status, a query tool), answered with the volume, the expression, the
// uptime and the connection it reports:
//
//	你现在状态怎么样  状态  你还好吗  音量是多少      how are you  status  what's the volume
//
// Arithmetic (calculate {"expression"}), sent as plain symbols (5+10, 3*(4+5)) and answered
// with the result. Text with a number and a power, root or modulo word (2的3次方, square root
// of 16) goes to the tool as it was said:
//
//	5加10  三加四  十乘以三  十除以四等于多少  3*(4+5)
//	add 5 and 10  what is 12 divided by 4  subtract 3 from 10  seven times eight
//
// Memory (add_user_memory, search_user_memories, delete_user_memory), for Request.UserID or
// "default":
//
//	记住我喜欢科技 / remember that I like tea         -> add; the rest of the sentence is the memory
//	我喜欢什么 / what do I like / 我明天要做什么      -> search, and say what was found
//	你记得什么 / what do you remember about me        -> search for everything (see below)
//	忘掉那条 / forget that                            -> delete the memory last added or found
//	忘掉我喜欢茶 / forget that I like tea             -> search for it, delete the best match
//	忘掉所有记忆 / forget everything                  -> not done: one memory at a time
//
// "That" is the memory this session (Request.SessionID) last added or found; the planner
// keeps only that per session, for at most Options.MaxSessions sessions. A request without a
// session ID is a fresh session, so it has nothing to forget. Every memory it adds gets a
// general topic (偏好 / preference, or 备忘 / note) besides what is liked; "你记得什么" searches
// for those and common words, since the memory tools cannot list everything.
//
// Web search (search_web {"query"}), answered with the top three titles and URLs, or the
// tool's error (no backend configured) as it is:
//
//	搜索 今天的新闻  搜一下量子计算  上网查天气          search for golang  look up the weather in Oslo
//
// Reminders and timers (set_reminder, list_reminders, cancel_reminder of agent/reminders), with
// times said in the agent's time zone (Options.Location); the reply says when, in words:
//
//	10分钟后提醒我喝水  明天早上8点提醒我开会  每周一早上9点提醒我交周报  计时5分钟  我有哪些提醒  取消喝水的提醒
//	remind me in 5 minutes to stretch  remind me every day at 8am to take my pills  set a timer for 3 minutes
//
// Also: 你好 / hello, 你能做什么 / help (what it can do now), 谢谢 / thanks.
//
// Several requests in one sentence run in order: 把音量调到30然后笑一个, set volume to 30 and
// smile, 音量调到二十，再哭一个. They are split at 然后, 接着, 再, commas and full stops, and at
// "and" / "then" when every part is understood alone (so "add 5 and 10" stays one). At most 8
// run. Remember and search take the rest of the sentence, commas included.
//
// Numbers may be Arabic (30), full-width (３０) or Chinese (零 一 二 两 三 … 十 十五 二十五
// 一百 一百零五 一千零十 两千 两亿, 壹佰, 三点五, 百分之五十), or English words (twenty-five,
// one hundred and five, three thousand), read by package agent/numerals as calculate reads
// them. Two readings are the planner's own: a unit with nothing to count (百 in 百分之五十) is
// not a number, and "one hundred and five" is one number. A lone 一 that means "a" (一点,
// 一下, 一个) is not a number.
//
// # Replies
//
// A request for a tool the turn does not list is answered honestly (a device without a face,
// a server without memory tools), and so is anything the grammar does not know: the reply
// says it did not understand and lists what it can do with the tools listed now, naming the
// tools it cannot use by rule. A tool error (an *agent.ToolError: invalid parameters, a device
// failure, a timeout, busy) is explained in the reply with its code and details, and the rest
// of the request still runs. agent.ErrDeviceGone, or the end of the turn's context, ends the
// turn with that error. Utterances over 1000 characters are refused without calling anything.
//
// The reply is streamed with TurnContext.Chunk, a sentence per request; the agent sends the
// final reply.
//
// # What it does not understand
//
// Anything outside the grammar above: open questions, conversation, weather or time, other
// device tools, powers and functions in arithmetic, relative changes without a status tool,
// traditional characters beyond the keywords they share with simplified ones, and references
// across turns other than the memory "that".
package rules
