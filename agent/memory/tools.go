package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/devicectl/devicectl/tools"
)

// toolTimeout bounds one memory tool call: a database write waits at most
// busyTimeoutMS for the lock, and a search of a large memory takes
// milliseconds.
const toolTimeout = 10 * time.Second

// The names of the tools RegisterTools adds, as seed 004 gives them.
const (
	ToolAdd    = "add_user_memory"
	ToolSearch = "search_user_memories"
	ToolDelete = "delete_user_memory"
)

type addInput struct {
	Content string   `json:"content" jsonschema:"the fact to remember, as one self-contained sentence"`
	UserID  string   `json:"user_id" jsonschema:"the user the memory is about"`
	Topics  []string `json:"topics,omitempty" jsonschema:"a few short keywords that help find the memory later"`
}

type searchInput struct {
	Query  string `json:"query" jsonschema:"a question or keywords, in any language"`
	UserID string `json:"user_id" jsonschema:"the user whose memories to search"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many memories to return at most; 5 when left out" tool:"min=1,max=50"`
}

type deleteInput struct {
	UserID   string `json:"user_id" jsonschema:"the user the memory belongs to"`
	MemoryID string `json:"memory_id" jsonschema:"the memory's id, as add_user_memory or search_user_memories gave it"`
}

// RegisterTools adds add_user_memory, search_user_memories and
// delete_user_memory, backed by s, to r. They are main_type local and
// sub_type query: the model needs their answers (an id, the memories, true
// or false), so the agent must wait for them rather than answer "success".
func RegisterTools(r *tools.Registry, s *Store) error {
	if r == nil || s == nil {
		return errors.New("memory: RegisterTools: nil registry or store")
	}
	add, errAdd := tools.Func(tools.LocalQuery(ToolAdd,
		"Remember a fact about the user for later conversations: a preference, a name, a plan. "+
			"content is one self-contained sentence, e.g. \"用户喜欢科技相关话题\" or \"The user's dog is called Max\"; "+
			"topics are a few short keywords, e.g. [\"兴趣\",\"偏好\",\"科技\"]. Returns the new memory's id."),
		func(ctx context.Context, in addInput) (string, error) {
			return s.Add(ctx, in.UserID, in.Content, in.Topics)
		})
	search, errSearch := tools.Func(tools.LocalQuery(ToolSearch,
		"Look up what is remembered about the user, in Chinese or English. Call it before answering "+
			"about the user's preferences, plans or past. Returns the best matches first as "+
			"[{\"id\",\"memory\",\"topics\",\"relevance\"}], relevance from 0 to 1; an empty list means nothing matches."),
		func(ctx context.Context, in searchInput) ([]Hit, error) {
			hits, err := s.Search(ctx, in.UserID, in.Query, in.Limit)
			for i := range hits {
				hits[i].Relevance = roundRelevance(hits[i].Relevance)
			}
			return hits, err
		})
	del, errDel := tools.Func(tools.LocalQuery(ToolDelete,
		"Forget one memory of the user, by the id add_user_memory or search_user_memories gave. "+
			"Returns true when it was deleted, false when the user had no such memory."),
		func(ctx context.Context, in deleteInput) (bool, error) {
			return s.Delete(ctx, in.UserID, in.MemoryID)
		})
	if err := errors.Join(errAdd, errSearch, errDel); err != nil {
		return err
	}

	// The limits the tags cannot say: a model that sends too much gets
	// -32602 naming the field instead of a failure from the store.
	limitString(add, "content", 1, MaxContentRunes)
	limitString(add, "user_id", 1, MaxUserIDLen)
	topics := add.Parameters.Properties["topics"]
	topics.MaxItems = ptr(MaxTopics)
	topics.Items.MinLength = ptr(1)
	topics.Items.MaxLength = ptr(MaxTopicRunes)
	limitString(search, "query", 1, MaxQueryRunes)
	limitString(search, "user_id", 1, MaxUserIDLen)
	limitString(del, "user_id", 1, MaxUserIDLen)
	limitString(del, "memory_id", 1, 64)

	for _, t := range []*tools.Tool{add, search, del} {
		t.Timeout = toolTimeout
		if err := r.Add(t); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	return nil
}

func limitString(t *tools.Tool, name string, minLen, maxLen int) {
	p := t.Parameters.Properties[name]
	p.MinLength = ptr(minLen)
	p.MaxLength = ptr(maxLen)
}

func ptr[T any](v T) *T { return &v }

// roundRelevance keeps three decimals for the model to read, without turning
// a weak match into 0.
func roundRelevance(r float64) float64 {
	x := math.Round(r*1000) / 1000
	if x == 0 && r > 0 {
		return 0.001
	}
	return x
}
