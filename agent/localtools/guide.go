package localtools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/tools"
)

type queryInput struct {
	Query string `json:"query"`
}

// Guide returns guide_user_detail's answer for a query: four numbered
// questions that narrow the request, in Chinese when the query has Han
// characters and in English otherwise. The answer is a pure function of the
// query.
func Guide(query string) (string, error) {
	q, err := cleanQuery(query)
	if err != nil {
		return "", err
	}
	topic := topicOf(q)
	h, known := hintFor(topic)
	g, areas := guideEn, h.enAreas
	if agent.Chinese(q) {
		g, areas = guideZh, h.zhAreas
	}
	if !known {
		areas = g.areas
	}
	return fmt.Sprintf(g.questions, topic, areas), nil
}

// guideText is Guide's answer in one language: questions takes the topic (%[1]s) and the areas
// to offer (%[2]s), which are areas when the topic has no hint.
type guideText struct{ questions, areas string }

var (
	guideZh = guideText{
		questions: "为了更好地帮助您查找关于%[1]s的信息，我有几个问题：\n" +
			"1. 您是想了解%[1]s的基本概念还是最新发展？\n" +
			"2. 您对%[1]s的哪个具体领域感兴趣？例如，%[2]s？\n" +
			"3. 您是出于学术目的、职业发展还是个人兴趣在了解这个话题？\n" +
			"4. 您希望获得基础入门级的信息还是深入的技术细节？",
		areas: "它的原理、应用还是发展历史",
	}
	guideEn = guideText{
		questions: "To help you find information about %[1]s, I have a few questions:\n" +
			"1. Would you like the basic concepts of %[1]s or its latest developments?\n" +
			"2. Which specific area of %[1]s interests you? For example, %[2]s?\n" +
			"3. Are you looking into this topic for study, for your career or out of personal interest?\n" +
			"4. Would you like an introduction or in-depth technical detail?",
		areas: "how it works, where it is used, or its history",
	}
)

// cleanQuery trims a query, makes each run of spaces, line breaks and
// control characters one space (the answer quotes the topic inside its own
// lines), and refuses an empty or overlong query.
func cleanQuery(query string) (string, error) {
	q := strings.Join(strings.FieldsFunc(query, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if q == "" {
		return "", errors.New("the query is empty")
	}
	if utf8.RuneCountInString(q) > MaxQueryLen {
		return "", fmt.Errorf("the query is longer than %d characters", MaxQueryLen)
	}
	return q, nil
}

func guideTool() (*tools.Tool, error) {
	t, err := tools.Func(tools.LocalQuery(ToolGuide,
		"Returns questions to ask the user when a request is too broad or vague to answer or search well "+
			"(e.g. just a topic like \"人工智能\"): what they want to know, which area, for what purpose, at what depth. "+
			"Ask the user these questions (you may adapt them) and wait for the answer before searching. "+
			"The questions are in the query's language."),
		func(ctx context.Context, in queryInput) (string, error) {
			return Guide(in.Query)
		})
	if err != nil {
		return nil, err
	}
	p := t.Parameters.Properties["query"]
	p.Description = "The user's request as they wrote it, e.g. \"人工智能\"."
	p.MinLength, p.MaxLength = ptr(1), ptr(MaxQueryLen)
	return t, nil
}
