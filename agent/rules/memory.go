package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/agent/memory"
	"github.com/devicectl/devicectl/tools"
)

// Memories: add_user_memory, search_user_memories and delete_user_memory, and saying back to a
// person what they said of themselves.

func (r *turn) memoryUnavailable() {
	r.say("记忆功能现在不可用。", "Memory is not available right now.")
}

// reZhLike and reEnLike find what is liked, a memory's topic: "I like tea" / 我喜欢科技.
var (
	reZhLike = regexp.MustCompile(`(?:喜欢|爱|讨厌|想要|想)(.+)$`)
	reEnLike = regexp.MustCompile(`(?i)\b(?:like|love|hate|prefer|enjoy|want)s? (.+)$`)
)

// topicsOf gives a memory its topics: what is liked, if it says, and a general one
// (偏好 / preference, or 备忘 / note) that a search for everything (generalQuery) finds.
// Each is cut to the length the tool's schema allows for an item.
func topicsOf(d tools.Declaration, content string) []string {
	zh := isChinese(content)
	re, general := reEnLike, "note"
	if zh {
		re, general = reZhLike, "备忘"
	}
	var topics []string
	if m := re.FindStringSubmatch(content); m != nil {
		if t := strings.TrimSpace(m[1]); t != "" {
			topics = append(topics, t)
			general = map[bool]string{true: "偏好", false: "preference"}[zh]
		}
	}
	topics = append(topics, general)
	maxLen := 30
	if p := property(d, "topics"); p != nil && p.Items != nil && p.Items.MaxLength != nil {
		maxLen = min(maxLen, *p.Items.MaxLength)
	}
	for i, t := range topics {
		if rs := []rune(t); len(rs) > maxLen {
			topics[i] = string(rs[:maxLen])
		}
	}
	return topics
}

// generalQuery stands for "everything" in a memory search, which has no way to list all:
// the general topics the planner gives every memory, and the words memories about a
// person usually hold.
const generalQuery = "偏好 备忘 喜欢 名字 生日 住在 工作 preference note like name birthday live work"

func (r *turn) remember(content string) error {
	d, ok := r.decl[memory.ToolAdd]
	if !ok {
		r.memoryUnavailable()
		return nil
	}
	content = fitString(d, "content", content)
	if content == "" || len(content) < minLength(d, "content") {
		r.say("要我记住什么？比如“记住我喜欢科技”。", "What should I remember? For example \"remember that I like tea\".")
		return nil
	}
	in := map[string]any{"content": content}
	if property(d, "user_id") != nil {
		in["user_id"] = r.userID()
	}
	if property(d, "topics") != nil {
		in["topics"] = topicsOf(d, content)
	}
	res, failure, err := r.call(memory.ToolAdd, in)
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("记住这件事", "remember that", failure)
		return nil
	}
	if id := memoryID(res); id != nil {
		r.p.setLastMemory(r.req.SessionID, &memoryRef{id: id, content: content})
	}
	en := "OK, I'll remember: " + content + "."
	if aboutMe.MatchString(content) {
		en = "OK, I'll remember that " + secondPerson(content) + "."
	}
	r.say("好的，我记住了："+secondPerson(content)+"。", en)
	return nil
}

// foundMemory is one result of search_user_memories.
type foundMemory struct {
	ID        any      `json:"id"`
	Memory    string   `json:"memory"`
	Content   string   `json:"content"`
	Relevance *float64 `json:"relevance"`
}

func (m foundMemory) text() string {
	if m.Memory != "" {
		return m.Memory
	}
	return m.Content
}

// searchMemories runs search_user_memories and returns what it found, best first, without
// the results it scores as not relevant at all.
func (r *turn) searchMemories(query string) (found []foundMemory, failure, fatal error) {
	d := r.decl[memory.ToolSearch]
	if query == "" {
		query = generalQuery
	}
	query = fitString(d, "query", query)
	in := map[string]any{"query": query}
	if property(d, "user_id") != nil {
		in["user_id"] = r.userID()
	}
	if property(d, "limit") != nil {
		lo, hi := intBounds(d, "limit", 1, 100)
		in["limit"] = min(max(5, lo), hi)
	}
	res, failure, err := r.call(memory.ToolSearch, in)
	if err != nil || failure != nil {
		return nil, failure, err
	}
	var list []foundMemory
	if err := json.Unmarshal(res, &list); err != nil {
		var wrapped struct {
			Memories []foundMemory `json:"memories"`
			Results  []foundMemory `json:"results"`
		}
		if err := json.Unmarshal(res, &wrapped); err != nil {
			return nil, fmt.Errorf("the memory search answered something unexpected: %s", clip(string(res), 100)), nil
		}
		list = append(wrapped.Memories, wrapped.Results...)
	}
	for _, m := range list {
		if m.text() == "" || m.Relevance != nil && *m.Relevance <= 0 {
			continue
		}
		found = append(found, m)
	}
	return found, nil, nil
}

func (r *turn) recall(query string) error {
	if !r.has(memory.ToolSearch) {
		r.memoryUnavailable()
		return nil
	}
	found, failure, err := r.searchMemories(query)
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("查找记忆", "search my memories", failure)
		return nil
	}
	if len(found) == 0 {
		r.say("关于这个，我还什么都没有记住。", "I don't remember anything about that yet.")
		return nil
	}
	if len(found) > 5 {
		found = found[:5]
	}
	said := make([]string, len(found))
	for i, m := range found {
		said[i] = secondPerson(m.text()) // each in its own language, as it was stored
	}
	if found[0].ID != nil {
		// "That" is now the best match: the one listed first.
		r.p.setLastMemory(r.req.SessionID, &memoryRef{id: found[0].ID, content: found[0].text()})
	}
	r.say("我记得："+strings.Join(said, "；")+"。", "I remember: "+strings.Join(said, "; ")+".")
	return nil
}

func (r *turn) forget(what string) error {
	if !r.has(memory.ToolDelete) {
		r.memoryUnavailable()
		return nil
	}
	var ref *memoryRef
	if what == "" {
		ref = r.p.lastMemory(r.req.SessionID)
		if ref == nil {
			r.say("这次对话里我还没有记住或找到哪条记忆，所以没有可以忘掉的。",
				"There is nothing to forget: I haven't added or found a memory in this conversation.")
			return nil
		}
	} else {
		if !r.has(memory.ToolSearch) {
			r.say("我找不到记忆，没法知道要忘掉哪一条。", "I can't search my memories, so I can't tell which one to forget.")
			return nil
		}
		found, failure, err := r.searchMemories(what)
		if err != nil {
			return err
		}
		if failure != nil {
			r.failed("查找要忘掉的记忆", "find the memory to forget", failure)
			return nil
		}
		if len(found) == 0 {
			r.say("我没有找到关于“"+clip(what, 40)+"”的记忆。", "I don't have a memory about \""+clip(what, 40)+"\".")
			return nil
		}
		ref = &memoryRef{id: found[0].ID, content: found[0].text()}
		if ref.id == nil {
			r.say("记忆工具没有给出这条记忆的编号，我没法删掉它。", "The memory tool gave no id for that memory, so I can't delete it.")
			return nil
		}
	}
	d := r.decl[memory.ToolDelete]
	id := ref.id
	switch {
	case isType(d, "memory_id", "integer") || isType(d, "memory_id", "number"):
		if s, ok := id.(string); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				id = n
			}
		}
	default:
		if n, ok := id.(json.Number); ok {
			id = n.String()
		} else if f, ok := id.(float64); ok {
			id = formatNumber(f)
		}
	}
	in := map[string]any{"memory_id": id}
	if property(d, "user_id") != nil {
		in["user_id"] = r.userID()
	}
	res, failure, err := r.call(memory.ToolDelete, in)
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("忘掉这条记忆", "forget that memory", failure)
		return nil
	}
	r.p.setLastMemory(r.req.SessionID, nil)
	var deleted bool
	if json.Unmarshal(res, &deleted) != nil {
		var obj struct {
			Deleted *bool `json:"deleted"`
			Success *bool `json:"success"`
		}
		_ = json.Unmarshal(res, &obj)
		deleted = obj.Deleted != nil && *obj.Deleted || obj.Success != nil && *obj.Success
	}
	if !deleted {
		r.say("那条记忆已经不在了。", "That memory was already gone.")
		return nil
	}
	r.say("好的，我忘掉了："+secondPerson(ref.content)+"。", "OK, I forgot that "+secondPerson(ref.content)+".")
	return nil
}

// memoryID reads the id add_user_memory answered: "memory-456" as in seed 004, a number, or
// an object with an id.
func memoryID(res json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(res))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		if v != "" {
			return v
		}
	case json.Number:
		return v
	case map[string]any:
		for _, k := range []string{"id", "memory_id"} {
			if id, ok := v[k]; ok && id != nil {
				return id
			}
		}
	}
	return nil
}

// aboutMe matches English that starts with its speaker ("I like tea", "my dog is Max"), which
// reads back well after "that": "I'll remember that you like tea".
var aboutMe = regexp.MustCompile(`(?i)^(i|i'm|i've|i'd|i'll|my|me)\b`)

// reFirstPerson finds the English first person, to say a memory back to its owner.
var reFirstPerson = regexp.MustCompile(`(?i)\b(i'm|i've|i'll|i'd|i am|i was|i|me|my|mine|myself)\b`)

var secondPersonWords = map[string]string{
	"i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd", "i am": "you are",
	"i was": "you were", "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
}

// secondPerson turns what the person said about themselves into what the agent says back:
// 我喜欢科技 -> 你喜欢科技, "I like tea" -> "you like tea".
func secondPerson(s string) string {
	if isChinese(s) {
		return strings.ReplaceAll(s, "我", "你")
	}
	return reFirstPerson.ReplaceAllStringFunc(s, func(w string) string {
		return secondPersonWords[strings.ToLower(w)]
	})
}
