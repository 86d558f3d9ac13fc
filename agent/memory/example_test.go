package memory_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/devicectl/devicectl/agent/memory"
	"github.com/devicectl/devicectl/agent/store"
)

// The seed's example: a memory in Chinese, found by a question that shares
// only some of its words.
func ExampleStore() {
	dir, err := os.MkdirTemp("", "memory-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(context.Background(), filepath.Join(dir, "agent.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	memories, err := memory.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}

	id, err := memories.Add(ctx, "user-123", "用户喜欢科技相关话题", []string{"兴趣", "偏好", "科技"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := memories.Add(ctx, "user-123", "用户住在上海", []string{"住址"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(id)
	hits, err := memories.Search(ctx, "user-123", "用户对什么话题感兴趣", 5)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %s %v %.2f\n", h.ID, h.Memory, h.Topics, h.Relevance)
	}
	deleted, err := memories.Delete(ctx, "user-123", id)
	fmt.Println(deleted, err)
	// Output:
	// memory-1
	// memory-1 用户喜欢科技相关话题 [兴趣 偏好 科技] 0.75
	// memory-2 用户住在上海 [住址] 0.29
	// true <nil>
}
