package localtools

import (
	"strings"

	"github.com/devicectl/devicectl/agent"
)

// hint is what we know of a few well-known topics, to give examples that
// fit; any other topic gets generic wording. Keep entries short: they are
// examples in a question, not facts the user relies on.
type hint struct {
	names   []string // as written in queries, lower case for English
	zhAreas string   // 机器学习、自然语言处理或计算机视觉
	enAreas string
	zhHow   string // completes "探索X如何…"
	enHow   string // completes "how X …"
	zhApps  string // 游戏、机器人、自动驾驶
	enApps  string
}

var hints = []hint{
	{
		names:   []string{"人工智能", "ai", "artificial intelligence"},
		zhAreas: "机器学习、自然语言处理或计算机视觉", enAreas: "machine learning, natural language processing or computer vision",
		zhHow: "让机器从数据中学习并做出判断", enHow: "lets machines learn from data and make decisions",
		zhApps: "医疗、金融、交通", enApps: "healthcare, finance and transport",
	},
	{
		names:   []string{"机器学习", "machine learning"},
		zhAreas: "监督学习、无监督学习或强化学习", enAreas: "supervised, unsupervised or reinforcement learning",
		zhHow: "从数据中学习规律", enHow: "learns patterns from data",
		zhApps: "推荐系统、图像识别、风险控制", enApps: "recommendation, image recognition and risk control",
	},
	{
		names:   []string{"深度学习", "deep learning"},
		zhAreas: "卷积网络、循环网络或Transformer", enAreas: "convolutional networks, recurrent networks or transformers",
		zhHow: "通过多层神经网络学习特征", enHow: "learns features through many layers of neural networks",
		zhApps: "语音识别、图像识别、机器翻译", enApps: "speech recognition, image recognition and machine translation",
	},
	{
		names:   []string{"强化学习", "reinforcement learning"},
		zhAreas: "Q学习、策略梯度或多智能体学习", enAreas: "Q-learning, policy gradients or multi-agent learning",
		zhHow: "通过奖励机制进行学习", enHow: "learns through rewards",
		zhApps: "游戏、机器人、自动驾驶", enApps: "games, robotics and self-driving cars",
	},
	{
		names:   []string{"区块链", "blockchain"},
		zhAreas: "共识机制、智能合约或加密货币", enAreas: "consensus, smart contracts or cryptocurrencies",
		zhHow: "通过分布式账本和共识机制记录数据", enHow: "records data in a distributed ledger kept by consensus",
		zhApps: "金融、供应链、数字身份", enApps: "finance, supply chains and digital identity",
	},
	{
		names:   []string{"量子计算", "quantum computing"},
		zhAreas: "量子算法、量子硬件或量子纠错", enAreas: "quantum algorithms, quantum hardware or error correction",
		zhHow: "利用量子叠加和纠缠进行计算", enHow: "computes with superposition and entanglement",
		zhApps: "密码学、药物研发、优化问题", enApps: "cryptography, drug discovery and optimisation",
	},
}

// hintFor finds the hint of a topic, if any.
func hintFor(topic string) (hint, bool) {
	t := strings.ToLower(strings.TrimSpace(topic))
	for _, h := range hints {
		for _, n := range h.names {
			if t == n {
				return h, true
			}
		}
	}
	return hint{}, false
}

// Phrases around the topic of a request, removed to find the topic itself.
// Longer ones come first where one contains another.
var (
	zhLead = []string{
		"请帮我查一下", "请帮我搜索", "帮我查一下", "帮我搜索", "帮我查", "我想了解一下", "我想了解", "我想知道",
		"请介绍一下", "介绍一下", "请介绍", "介绍", "请问", "告诉我", "什么是", "什么叫", "关于", "了解", "搜索", "查一下", "请",
	}
	zhTrail = []string{
		"的相关信息", "的信息", "的资料", "的知识", "相关信息", "是什么意思", "是什么", "是啥", "吗", "呢", "？", "?", "。", "！",
	}
	enLead = []string{
		"please ", "can you ", "could you ", "tell me about ", "tell me ", "i want to know about ", "i want to learn about ",
		"information about ", "info about ", "search for ", "look up ", "find ", "explain ", "what is ", "what are ",
		"what's ", "about ", "the ",
	}
	enTrail = []string{"?", ".", "!", " please"}
)

// topicOf strips a request down to its topic: "我想了解人工智能" -> "人工智能",
// "tell me about quantum computing?" -> "quantum computing". When nothing
// is left, the request itself is the topic.
func topicOf(query string) string {
	q := strings.TrimSpace(query)
	zh := agent.Chinese(q)
	lead, trail := enLead, enTrail
	if zh {
		lead, trail = zhLead, zhTrail
	}
	t := q
	for changed := true; changed; {
		changed = false
		for _, p := range lead {
			if len(t) > len(p) && hasPrefixFold(t, p) {
				t, changed = strings.TrimSpace(t[len(p):]), true
			}
		}
		for _, p := range trail {
			if len(t) > len(p) && hasSuffixFold(t, p) {
				t, changed = strings.TrimSpace(t[:len(t)-len(p)]), true
			}
		}
	}
	if t == "" {
		return q
	}
	return t
}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }
func hasSuffixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[len(s)-len(p):], p)
}
