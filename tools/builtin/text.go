package builtin

// text is everything the built-in tools say, in one language: descriptions
// the server's model reads to decide when and how to call a tool, and the
// messages of results and failures. Formats take their arguments in the
// order documented per field.
type text struct {
	volume           string // amplify_volume's description
	volumeLevel      string // its level parameter
	volumeSet        string // result; %d: the level read back
	volumeSetFailed  string // %s: the hardware's error
	volumeOutOfRange string // the speaker refused the level
	volumeReadFailed string // %s: the hardware's error

	expression           string // set_virtual_human_expression's description
	expressionParam      string // its expression parameter
	expressionSet        string // result; %s: the expression read back
	expressionSetFailed  string // %s: the hardware's error
	expressionUnknown    string // the face refused the expression; %s: it
	expressionReadFailed string // %s: the hardware's error

	status            string // get_device_status's description
	statusVolume      string // %d: volume
	statusExpression  string // %s: expression
	statusUptime      string // %s: human uptime
	statusVersion     string // %s: version
	statusConnection  string // %s: connection state
	statusSeparator   string // between the parts of the message
	statusVolumeErr   string // %s: the hardware's error
	statusExprErr     string // %s: the hardware's error
	days, hours, mins string // uptime units
	secs, unitSep     string
}

var zh = text{
	volume: "设置设备扬声器的音量。当用户要求调大或调小音量、静音，或把音量设为某个值时调用。" +
		"level 是目标音量，0 到 100 的整数：0 为静音，100 为最大音量。" +
		"对“大声一点”“小声一点”这类相对要求，先调用 get_device_status 读取当前音量，再在此基础上增减 10 到 20。",
	volumeLevel:      "目标音量，0 到 100 的整数。0 为静音，100 为最大音量。",
	volumeSet:        "音量已成功设置为 %d",
	volumeSetFailed:  "执行失败：无法设置音量：%s",
	volumeOutOfRange: "执行失败：音量级别超出范围（0-100）。",
	volumeReadFailed: "执行失败：音量已设置，但无法读回：%s",

	expression: "设置设备屏幕上虚拟人的面部表情，让表情配合对话的情绪。" +
		"当你的回复表达开心、惊讶、难过等情绪，或用户要求做某个表情时调用。" +
		"expression 的取值：close_eyes_smile 眯眼笑（开心、满足）；close_eyes 闭眼（休息、思考、困倦）；" +
		"amazed 惊讶；smile 微笑（友好、愉快）；cry 哭泣（难过、同情）；idle 平静的默认表情（情绪过去、恢复常态时使用）。",
	expressionParam:      "要显示的表情，只能是 close_eyes_smile、close_eyes、amazed、smile、cry、idle 之一。",
	expressionSet:        "表情已成功设置为 %s",
	expressionSetFailed:  "执行失败：无法设置表情：%s",
	expressionUnknown:    "执行失败：设备不支持表情 %s。",
	expressionReadFailed: "执行失败：表情已设置，但无法读回：%s",

	status: "查询设备当前的状态：扬声器音量（0-100）、虚拟人的表情、已运行时间、软件版本，以及与服务器的连接状态。" +
		"当用户询问设备的状态、当前音量或表情时调用；相对调整音量（如“大声一点”）之前也先调用它获取当前音量。不需要参数。",
	statusVolume:     "音量 %d",
	statusExpression: "表情 %s",
	statusUptime:     "已运行 %s",
	statusVersion:    "版本 %s",
	statusConnection: "连接状态 %s",
	statusSeparator:  "，",
	statusVolumeErr:  "无法读取音量：%s",
	statusExprErr:    "无法读取表情：%s",
	days:             "天", hours: "小时", mins: "分", secs: "秒", unitSep: "",
}

var en = text{
	volume: "Set the device's speaker volume. Call it when the user asks to turn the volume up or down, to mute, " +
		"or to set it to a given value. level is the target volume, an integer from 0 (mute) to 100 (loudest). " +
		"For a relative request such as \"a bit louder\", first read the current volume with get_device_status, " +
		"then change it by 10 to 20.",
	volumeLevel:      "Target volume, an integer from 0 to 100: 0 is mute, 100 is the loudest.",
	volumeSet:        "Volume set to %d",
	volumeSetFailed:  "Failed: cannot set the volume: %s",
	volumeOutOfRange: "Failed: volume level out of range (0-100).",
	volumeReadFailed: "Failed: the volume was set but cannot be read back: %s",

	expression: "Set the facial expression of the virtual character on the device's screen, to match the mood of " +
		"the conversation. Call it when your reply expresses joy, surprise or sadness, or when the user asks for " +
		"an expression. Values: close_eyes_smile (eyes closed, smiling: happy, content); close_eyes (eyes closed: " +
		"resting, thinking, sleepy); amazed (surprised); smile (friendly, pleased); cry (sad, sympathetic); " +
		"idle (the calm default, for when the moment has passed).",
	expressionParam:      "The expression to show: one of close_eyes_smile, close_eyes, amazed, smile, cry, idle.",
	expressionSet:        "Expression set to %s",
	expressionSetFailed:  "Failed: cannot set the expression: %s",
	expressionUnknown:    "Failed: the device does not support the expression %s.",
	expressionReadFailed: "Failed: the expression was set but cannot be read back: %s",

	status: "Read the device's current state: speaker volume (0-100), the virtual character's expression, uptime, " +
		"software version and connection to the server. Call it when the user asks about the device, its volume " +
		"or its expression, and before a relative volume change (\"a bit louder\") to learn the current volume. " +
		"Takes no parameters.",
	statusVolume:     "volume %d",
	statusExpression: "expression %s",
	statusUptime:     "up %s",
	statusVersion:    "version %s",
	statusConnection: "connection %s",
	statusSeparator:  ", ",
	statusVolumeErr:  "cannot read the volume: %s",
	statusExprErr:    "cannot read the expression: %s",
	days:             "d", hours: "h", mins: "m", secs: "s", unitSep: " ",
}
