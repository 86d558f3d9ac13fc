package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
)

// benchWords make up the benchmark's memories: Chinese and English words of
// the kind people tell an assistant, some far more common than others.
var benchWords = strings.Fields(`用户 喜欢 讨厌 科技 音乐 电影 旅行 咖啡 茶 猫 狗 上海 北京 周末 早上 晚上
	工作 学习 编程 跑步 游泳 篮球 足球 小说 历史 天气 下雨 晴天 生日 朋友 家人 孩子 医生 会议 项目
	话题 新闻 手机 电脑 音箱 灯光 音量 安静 热闹 水果 苹果 香蕉 米饭 面条 火锅 辣 甜 健康 睡觉
	coffee music hiking python golang movies travel morning evening weekend meeting project family`)

// addBenchMemories gives user n memories of 5 to 15 words with 0 to 3 topics.
func addBenchMemories(b *testing.B, s *Store, user string, n int, rng *rand.Rand) {
	b.Helper()
	ctx := context.Background()
	word := func() string {
		// Skewed: low indexes (用户, 喜欢) are much more common.
		return benchWords[int(float64(len(benchWords))*rng.Float64()*rng.Float64())]
	}
	for range n {
		var text strings.Builder
		for range 5 + rng.IntN(11) {
			text.WriteString(word())
		}
		topics := make([]string, rng.IntN(4))
		for i := range topics {
			topics[i] = word()
		}
		if _, err := s.Add(ctx, user, text.String(), topics); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch10k searches one user's 10,000 memories (among 12,000 in
// the database), on each database.
func BenchmarkSearch10k(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d.String(), func(b *testing.B) { benchSearch10k(b, d) })
	}
}

func benchSearch10k(b *testing.B, d store.Dialect) {
	s, _ := newStore(b, storetest.Where(b, d))
	rng := rand.New(rand.NewPCG(1, 2))
	addBenchMemories(b, s, "other-1", 1000, rng)
	addBenchMemories(b, s, "user-123", 10000, rng)
	addBenchMemories(b, s, "other-2", 1000, rng)
	for _, query := range []string{
		"用户对什么话题感兴趣", // 用户 is in nearly every memory
		"周末去上海旅行",
		"what music does the user like in the evening",
	} {
		b.Run(query, func(b *testing.B) {
			ctx := context.Background()
			if _, err := s.Search(ctx, "user-123", query, 5); err != nil {
				b.Fatal(err)
			}
			hits := 0
			for b.Loop() {
				h, err := s.Search(ctx, "user-123", query, 5)
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h)
			}
			if hits == 0 {
				b.Fatal("no hits")
			}
		})
	}
}

// BenchmarkSearchAfterRestart is the first search of a user with 10,000
// memories after a restart: New on the database, then a search.
func BenchmarkSearchAfterRestart(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d.String(), func(b *testing.B) {
			s, db := newStore(b, storetest.Where(b, d))
			addBenchMemories(b, s, "user-123", 10000, rand.New(rand.NewPCG(1, 2)))
			ctx := context.Background()
			for b.Loop() {
				fresh, err := New(ctx, db)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := fresh.Search(ctx, "user-123", "用户对什么话题感兴趣", 5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAdd adds one memory to a user who has some already.
func BenchmarkAdd(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d.String(), func(b *testing.B) {
			s, _ := newStore(b, storetest.Where(b, d))
			rng := rand.New(rand.NewPCG(3, 4))
			addBenchMemories(b, s, "user-123", 100, rng)
			i := 0
			for b.Loop() {
				i++
				if _, err := s.Add(context.Background(), "user-123", fmt.Sprintf("用户喜欢科技相关话题 %d", i), []string{"兴趣", "科技"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
