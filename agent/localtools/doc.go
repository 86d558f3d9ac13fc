// Package localtools holds the agent server's own tools, the ones seed 004
// describes: calculate, guide_user_detail, split_query_to_dimension and
// search_web. They are tools.Tool values with main_type local and sub_type
// query; Register adds them to a *tools.Registry, and the agent validates
// their input against their schemas as it does a device's tools. A
// handler's error is a tool failure (-32000 upstream) whose text is meant
// for the model and the person: it says what is wrong and, where it can,
// how to put it right.
//
// # calculate
//
// {"expression":"add 5 and 10"} answers {"result":15,"operation":"add",
// "numbers":[5,10]}. The expression is parsed by a Pratt parser, then
// computed exactly (see Exactness below); nothing is evaluated but this
// grammar:
//
//	list    = binary { AND binary } [ AGGREGATE ]      5和10的和; "and" alone is an error
//	binary  = unary { BINOP binary }                   Pratt: + - < * / % < unary - < ^
//	unary   = ( "-" | "+" | "负" | "negative" ) binary(unary level) | postfix
//	postfix = primary { "squared" | "cubed" | "平方" | "立方" | ROOT
//	                  | "的" ( "平方" | "立方" | ROOT | unary ("次方" | "次幂") ) }
//	primary = NUMBER | "(" list ")" | ROOT unary | wordform
//	wordform= ("add" | "sum of") binary { ("and" | "to") binary }
//	        | "subtract" X "from" Y                    Y - X
//	        | "difference between|of" X "and" Y        X - Y
//	        | ("multiply" | "product of") binary { ("by" | "and") binary }
//	        | "divide" X "by" Y | "quotient of" X "and|by" Y
//
// Operators, loosest first: + and - (plus, minus, 加, 减, 加上, 减去);
// * / % (times, x, multiplied by, divided by, over, mod, modulo, 乘, 乘以,
// 除以, 模); unary minus; ^ and ** (to the power of, raised to, 的…次方),
// which is right-associative: 2^3^2 is 2^9, -2^2 is -4, 2^-1 is 0.5. ROOT
// is square root (of), sqrt, √, 根号, 平方根, 开方 or cube root (of), cbrt,
// 立方根; as a prefix it takes its operand like a function (sqrt 16 + 9 is
// 13). × ÷ − and full-width forms (１２＋３) are read as their ASCII
// counterparts. AGGREGATE is 的和, 的差, 的积, 的商.
//
// NUMBER is a decimal (3, 2.5, .5, 1e3), optionally followed by a Chinese
// multiplier (5万, 3千); a Chinese numeral (三十, 二十五, 一百零五, 一千零十,
// 两, 三百五 = 350, 一万二 = 12000, 一亿五千万, 二零二三 digit by digit,
// 三点五 = 3.5, the financial forms 壹贰叁, 万 alone = 10000); or English
// number words (five, twenty-five, one hundred five, three thousand; "and"
// joins operands, so "add one hundred and five" is 100+5). Numerals are read
// by package agent/numerals, as the rule planner reads them. pi, π and 圆周率
// are π. Fillers (what is, calculate, please, the, 计算, 等于多少, ?, =) are
// ignored.
//
// operation names the one operation of the expression (add, subtract,
// multiply, divide, modulo, power, sqrt, cbrt), "number" for a lone number
// and "expression" for anything compound such as 3*(4+5); numbers lists
// the numbers in the order the operations take them (as written, except
// that "subtract 3 from 10" lists 10, 3).
//
// # Exactness
//
// Numbers are exact rationals (math/big) while the expression allows: + - *
// / and %, integer powers, and roots and fractional powers whose value is
// rational (sqrt(16) is 4, (-8)^(1/3) is -2, 4^0.5 is 2). A root or power
// with no rational value (sqrt(2), 2^0.5), and π, make the rest of the
// computation float64. result is a JSON number with every digit of an exact
// value: 99999999999*99999999999 is 9999999999800000000001, 2^64 is
// 18446744073709551616, 0.1+0.2 is 0.3, 1/8 is 0.125 (exponent form below
// 10^-6: 2^-20 is 9.5367431640625e-7). Otherwise it is rounded, and
// "approximate": true says so: a fraction with no finite decimal form to 20
// significant digits, with the exact "fraction" beside it when that is at
// most 64 characters ({"result":0.33333333333333333333, ..., "approximate":true,
// "fraction":"1/3"}); a float64 result to 15 (sqrt(2) is 1.4142135623731).
//
// Every exact number, written or computed, has at most MaxDigits (1000)
// digits in its numerator and denominator. An integer beyond that is refused
// before it is computed (9^9^9^9, 10^1000: "result is too large: it has
// more than 1000 digits"); a fraction beyond it goes on in floating point,
// and is refused when that leaves float64's range.
//
// Refused with an *ExprError naming the 1-based character position:
// division by zero (also 0 to a negative power), unbalanced parentheses,
// unknown words (the message lists the known ones), an empty expression, a
// square root of a negative number, results that are not finite real
// numbers, numbers of more than MaxDigits digits, Chinese numerals that are
// not numbers (十十), expressions longer than MaxExpressionLen characters
// or nested deeper than MaxExpressionDepth.
//
// # guide_user_detail and split_query_to_dimension
//
// Both are deterministic text work, no model: Guide asks four questions
// that narrow a request; Split cuts a request at its conjunctions (以及, 和,
// 还有, and, as well as, ...) and question marks into dimensions, or gives a
// single topic the standard three (definition, how it works, applications).
// Both answer in Chinese when the query has Han characters, else English.
// A few well-known topics (人工智能, 强化学习, ...) have example areas and
// applications in a small table; every other topic gets generic wording.
//
// # search_web
//
// search_web asks a Backend. SearXNG is the first: its JSON API, GET
// <base>/search?q=...&format=json, which the instance must enable in its
// settings.yml (search.formats: [html, json]). Scores are SearXNG's divided
// by the best, so they lie in [0,1]; IDs are result-1, result-2, ...; text
// and summary come from the result's content. Unreachable, slow, refusing
// or garbled backends give errors that name the backend's address
// (ErrSearchBackend). Without a backend every call fails with ErrNoBackend,
// which says how to configure one; search_web never invents results.
package localtools
