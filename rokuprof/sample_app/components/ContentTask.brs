' ContentTask: builds ContentNodes on its own thread, as a real app's feed parsing would.
sub init()
    m.top.functionName = "buildContent"
end sub

sub buildContent()
    if m.top.mode = "details"
        node = CreateObject("roSGNode", "ContentNode")
        node.id = m.top.itemId
        node.description = describe(Len(m.top.itemId) * 7, 40)
        m.top.content = node
        return
    end if
    root = CreateObject("roSGNode", "ContentNode")
    for r = 1 to 6
        row = root.createChild("ContentNode")
        row.title = "Row " + r.toStr()
        for i = 1 to 12
            item = row.createChild("ContentNode")
            item.id = r.toStr() + "-" + i.toStr()
            item.title = "Item " + item.id
            item.shortDescriptionLine1 = describe(r * 12 + i, 4)
        end for
    end for
    m.top.content = root
end sub

function describe(seed as Integer, words as Integer) as String
    vocabulary = ["coffee", "crema", "roast", "bean", "steam", "pour", "grind", "cup"]
    parts = []
    for w = 0 to words - 1
        parts.push(vocabulary[(seed + w * 3) mod vocabulary.count()])
    end for
    return parts.join(" ")
end function
