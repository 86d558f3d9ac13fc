// Package numerals reads numbers written in words: Chinese numerals
// (三十, 一千零十, 两万三, 一亿五千万, 壹佰贰拾叁, 三点一四, 二零二三) and
// English number words (twenty-five, one hundred five, three thousand).
// The rule planner (agent/rules) and the calculate tool (agent/localtools)
// both read them through here, so that what 一千零十 is does not depend on
// who reads it.
//
// # Chinese
//
// A numeral is a run of digits (零〇一二两俩三四五六七八九 and the
// financial 壹贰叁肆伍陆柒捌玖) and units (十百千, 拾佰仟, 万, 亿),
// optionally followed by 点 and digits, read one by one (三点一四 is 3.14).
// Values are exact (big.Rat).
//
//   - A run of digits only is read digit by digit, as years and codes are
//     said: 二零二三 is 2023, 二五 is 25.
//   - Otherwise each digit multiplies the unit after it; 十 with no digit
//     before it counts one ten (十五, 三万十二, 一千零十 is 1010); units
//     within a section descend (十十 and 一百一千 are not numbers); 万
//     groups the four places below it and 亿 everything before it, once
//     each (一万亿 is 10^12; 万万 and 亿亿 are refused).
//   - 零 marks missing places and is otherwise worth nothing: 一百零五 is
//     105, 一千零十 is 1010, 一万零二 is 10002.
//   - The spoken short form: a last digit right after a unit of at least a
//     hundred, with no 零 between, is worth a tenth of that unit: 一百二 is
//     120, 三千五 is 3500, 两万三 is 23000, 一亿五 is 150000000.
//   - 百, 千, 万 or 亿 with nothing before it is a number only with
//     Options.BareUnits (万 is 10000); without it 百 alone is not a number,
//     as in 百分之五十.
//
// # English
//
// zero to nineteen, the tens, hundred (after 1 to 99: nineteen hundred is
// 1900), thousand, million, billion and trillion, each scale smaller than
// the one before; "a hundred", "a thousand". With Options.And, "and" after
// hundred or a scale continues the number (one hundred and five is 105);
// without it "and" ends the number, for readers to whom "and" joins
// operands. A word that cannot continue a number ends it: "five ten" is two
// numbers.
package numerals
