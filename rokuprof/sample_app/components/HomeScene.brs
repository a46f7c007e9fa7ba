' HomeScene: the rows, the details view, and the remote's keys.
sub init()
    m.rows = m.top.findNode("rows")
    m.details = m.top.findNode("details")
    m.rows.observeField("rowItemSelected", "onItemSelected")
    loadContent("home", "")
    m.rows.setFocus(true)
end sub

sub loadContent(mode as String, itemId as String)
    m.task = CreateObject("roSGNode", "ContentTask")
    m.task.mode = mode
    m.task.itemId = itemId
    m.task.observeField("content", "onContentLoaded")
    m.task.control = "run"
end sub

sub onContentLoaded(event as Object)
    if event.getRoSGNode().mode = "home"
        m.rows.content = event.getData()
        onDeepLink()
    else
        m.top.findNode("detailsText").text = event.getData().description
    end if
end sub

sub onItemSelected()
    openItem(m.rows.rowItemSelected)
end sub

sub openItem(pos as Object)
    item = m.rows.content.getChild(pos[0]).getChild(pos[1])
    openDetails(item.title, item.id)
end sub

sub onDeepLink()
    link = m.top.deepLink
    if link = invalid or link.contentId = invalid or m.rows.content = invalid then return
    openDetails(link.contentId, link.contentId)
end sub

sub openDetails(title as String, itemId as String)
    m.top.findNode("detailsTitle").text = title
    m.top.findNode("detailsText").text = "Loading..."
    m.rows.visible = false
    m.details.visible = true
    m.details.setFocus(true)
    loadContent("details", itemId)
end sub

function onKeyEvent(key as String, press as Boolean) as Boolean
    if not press or m.rows.content = invalid then return false
    if m.details.visible
        if key = "back"
            m.details.visible = false
            m.rows.visible = true
            m.rows.setFocus(true)
        end if
        return true
    end if
    if key = "down" or key = "up"
        ' the RowList moves within its rows; at an edge, wrap around
        last = m.rows.content.getChildCount() - 1
        if key = "down" then m.rows.jumpToRowItem = [0, 0] else m.rows.jumpToRowItem = [last, 0]
        return true
    else if key = "OK"
        openItem(m.rows.rowItemFocused)
        return true
    end if
    return false ' Back on the rows: the scene closes and the app exits
end function
