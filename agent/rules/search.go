package rules

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/devicectl/devicectl/agent/localtools"
)

// webResult is one result of search_web.
type webResult struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

func (r *turn) search(query string) error {
	d, ok := r.decl[localtools.ToolSearch]
	if !ok {
		r.say("我现在不能上网搜索。", "I can't search the web right now.")
		return nil
	}
	query = fitString(d, "query", query)
	if query == "" || len(query) < minLength(d, "query") {
		r.say("要搜索什么？比如“搜索 今天的新闻”。", "What should I search for? For example \"search for today's news\".")
		return nil
	}
	res, failure, err := r.call(localtools.ToolSearch, map[string]any{"query": query})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("搜索“"+clip(query, 40)+"”", "search for \""+clip(query, 40)+"\"", failure)
		return nil
	}
	var results []webResult
	if json.Unmarshal(res, &results) != nil {
		var wrapped struct {
			Results []webResult `json:"results"`
		}
		if json.Unmarshal(res, &wrapped) != nil {
			r.say("搜索工具回答了："+clip(string(res), 200)+"。", "The search tool answered: "+clip(string(res), 200)+".")
			return nil
		}
		results = wrapped.Results
	}
	if len(results) == 0 {
		r.say("没有搜到关于“"+clip(query, 40)+"”的结果。", "I found nothing for \""+clip(query, 40)+"\".")
		return nil
	}
	if len(results) > 3 {
		results = results[:3]
	}
	items := make([]string, len(results))
	for i, res := range results {
		title := res.Title
		if title == "" {
			title = res.URL
		}
		items[i] = fmt.Sprintf("%d. %s (%s)", i+1, clip(title, 80), res.URL)
	}
	r.say("我搜到了："+strings.Join(items, "；")+"。", "Here is what I found: "+strings.Join(items, "; ")+".")
	return nil
}
